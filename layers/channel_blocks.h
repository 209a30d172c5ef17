// ChannelBlocks: how a convolution's plan (ConvPlan::channels) splits its
// channels and filters over the ranks of a channel group (the ranks that
// differ only in their channel coordinate). See convolution.h for the
// schemes.
//
// The P ranks of a channel group form a pc x pf grid: member r = i * pf +
// j reads input-channel block i (the input's channel parts i * pf .. i *
// pf + pf - 1, gathered over its row) and computes filter block j (the
// filters balanced over pf); the partial sums of block j are
// reduce-scattered over the pc members of its column in pieces (block j
// balanced over pc), and piece i belongs to member j * pc + i. Stationary
// output is pc = 1, stationary input pf = 1, stationary weights anything
// between.
//
//   const ChannelBlocks& c = conv.plan().channels;   // e.g. 2 x 3
//   c.piece_owner(r);   // who receives the piece member r makes
#ifndef DISTCONV_LAYERS_CHANNEL_BLOCKS_H_
#define DISTCONV_LAYERS_CHANNEL_BLOCKS_H_

namespace distconv {

struct ChannelBlocks {
  bool split = false;  // false: each rank convolves its own channels
  int pc = 1, pf = 1;

  // Pieces travel between members (both blocks are > 1).
  bool transposed() const { return pc > 1 && pf > 1; }
  // The member that owns the piece member r makes, and the one that
  // makes the piece member r owns (inverse permutations of 0 .. P-1).
  int piece_owner(int r) const { return (r % pf) * pc + r / pf; }
  int piece_maker(int r) const { return (r % pc) * pf + r / pc; }

  friend bool operator==(const ChannelBlocks& a, const ChannelBlocks& b) {
    return a.split == b.split && a.pc == b.pc && a.pf == b.pf;
  }
};

}  // namespace distconv

#endif  // DISTCONV_LAYERS_CHANNEL_BLOCKS_H_
