#!/usr/bin/env python3
"""PyTorch's convolution on the problems of perf/gpu_conv_bench, timed the
same way (a training step's forward with bias, backward-weights, bias
gradient and backward-data; median of 5 rounds of REPS steps between CUDA
events), so the two can be set side by side.

    perf/torch_conv_bench.py [REPS]

Prints per problem the milliseconds of a step for channels-first
(PyTorch's default) and channels-last tensors, with TF32 off and on
(torch.backends.cudnn.allow_tf32), cuDNN's timed algorithm search on
(torch.backends.cudnn.benchmark). Without PyTorch or a GPU it says so and
exits 0.
"""
import statistics
import sys

try:
    import torch
except ImportError:
    print("torch_conv_bench: PyTorch is not installed: benchmark not run")
    sys.exit(0)

PROBLEMS = [  # N, C, spatial..., filters, kernel
    ((1, 16, 1024, 1024), 16, 3),
    ((8, 64, 256, 256), 64, 3),
    ((1, 32, 512, 512), 32, 3),
    ((1, 16, 128, 128, 128), 16, 3),
]


def step_time(shape, filters, k, memory_format, reps):
    conv = torch.nn.functional.conv3d if len(shape) == 5 else torch.nn.functional.conv2d
    x = torch.randn(shape, device="cuda").to(memory_format=memory_format)
    x.requires_grad_(True)
    w = torch.randn((filters, shape[1]) + (k,) * (len(shape) - 2), device="cuda")
    w = w.to(memory_format=memory_format).requires_grad_(True)
    b = torch.randn(filters, device="cuda", requires_grad=True)
    y = conv(x, w, b, padding=k // 2)
    dy = torch.randn_like(y)

    def step():
        out = conv(x, w, b, padding=k // 2)
        out.backward(dy)

    for _ in range(3):
        step()
    times = []
    for _ in range(5):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(reps):
            step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / reps)
    return statistics.median(times)


def main():
    if not torch.cuda.is_available():
        print("torch_conv_bench: no CUDA device on this machine: benchmark not run")
        return
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    torch.backends.cudnn.benchmark = True
    print(f"torch {torch.__version__}, cuDNN {torch.backends.cudnn.version()}, "
          f"{torch.cuda.get_device_name()}")
    for shape, filters, k in PROBLEMS:
        last = torch.channels_last_3d if len(shape) == 5 else torch.channels_last
        for tf32 in (False, True):
            torch.backends.cudnn.allow_tf32 = tf32
            first = step_time(shape, filters, k, torch.contiguous_format, reps)
            cl = step_time(shape, filters, k, last, reps)
            shape_s = "x".join(map(str, shape))
            print(f"{shape_s:<20} F={filters:<4} k={k} {'tf32' if tf32 else 'strict':<6} "
                  f"torch channels-first {first:8.3f} ms | channels-last {cl:8.3f} ms")


if __name__ == "__main__":
    main()
