"""Data sets for data_files_test.sh: variants of the segmentation example's
--write-data file (x: N x C x H x W float32, labels: N x 1 x H x W int64)
that are not what the example reads.

    data_files_test.py GOOD.h5 SQUARE.h5 DIR
SQUARE.h5: a data set with as many channels as rows and columns.
"""
import sys

import h5py
import numpy as np


def copy(src, dst, x=None, labels=None, order=None):
    with h5py.File(src, 'r') as f:
        x0, labels0 = f['x'][...], f['labels'][...]
    with h5py.File(dst, 'w') as g:
        g['x'] = x0 if x is None else x(x0)
        g['labels'] = labels0 if labels is None else labels(labels0)
        g['x'].attrs['distconv_order'] = np.bytes_(order or 'NCHW')
        g['labels'].attrs['distconv_order'] = np.bytes_('NCHW')


def main():
    good, square, out = sys.argv[1:4]
    pad = lambda a: np.pad(a, ((0, 0), (0, 0), (2, 2), (2, 2)))
    copy(good, out + '/more_channels.h5',
         x=lambda x: np.concatenate([x, x[:, :1]], axis=1))
    copy(good, out + '/larger_image.h5', x=pad, labels=pad)
    copy(good, out + '/two_channel_labels.h5',
         labels=lambda l: np.concatenate([l, l], axis=1))
    copy(good, out + '/float64.h5', x=lambda x: x.astype(np.float64))
    copy(square, out + '/nhwc.h5', x=lambda x: x.transpose(0, 2, 3, 1),
         order='NHWC')
    copy(square, out + '/no_order.h5')
    with h5py.File(out + '/no_order.h5', 'a') as g:
        del g['x'].attrs['distconv_order']


if __name__ == '__main__':
    main()
