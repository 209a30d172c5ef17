// The training examples' command line (examples/training.h): options that
// need another one are refused, naming both, rather than ignored.
#include <string>
#include <vector>

#include "distconv/error.h"
#include "examples/training.h"
#include "gtest/gtest.h"

namespace distconv::examples {
namespace {

// parse_args on `args`, with the example's own --size=.
TrainOptions parsed(std::vector<std::string> args) {
  args.insert(args.begin(), "example");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  TrainOptions opt;
  Index size = 0;
  parse_args(static_cast<int>(argv.size()), argv.data(), &opt,
             {{"--size=", &size}});
  return opt;
}

std::string error_of(const std::vector<std::string>& args) {
  try {
    parsed(args);
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInvalidArgument);
    return e.what();
  }
  return "no error";
}

TEST(TrainingOptions, CheckpointOptionsNeedTheirDirectory) {
  EXPECT_NE(error_of({"--checkpoint-every=5"})
                .find("--checkpoint-every=5 needs --checkpoint-dir"),
            std::string::npos);
  EXPECT_NE(error_of({"--steps=9", "--resume"})
                .find("--resume needs --checkpoint-dir"),
            std::string::npos);
  const TrainOptions opt = parsed(
      {"--checkpoint-dir=ckpt", "--checkpoint-every=5", "--resume"});
  EXPECT_EQ(opt.checkpoint_dir, "ckpt");
  EXPECT_EQ(opt.checkpoint_every, 5);
  EXPECT_TRUE(opt.resume);
  // A directory alone: resumable later, no checkpoints written.
  EXPECT_EQ(parsed({"--checkpoint-dir=ckpt"}).checkpoint_every, 0);
}

TEST(TrainingOptions, UnknownAndMalformedOptions) {
  EXPECT_NE(error_of({"--bogus"}).find("unknown option --bogus"),
            std::string::npos);
  EXPECT_NE(error_of({"--size=0"}).find("--size=0: expected a positive"),
            std::string::npos);
  EXPECT_EQ(parsed({"--size=8", "--steps=3"}).steps, 3);
}

// --kernel-choice: heuristic by default; measured gives the layers one
// shared cache.
TEST(TrainingOptions, KernelChoice) {
  EXPECT_EQ(parsed({}).kernel_choice, ConvImplSearch::kHeuristic);
  const TrainOptions opt = parsed({"--kernel-choice=measured"});
  EXPECT_EQ(opt.kernel_choice, ConvImplSearch::kMeasured);
  const CpuConvOptions k = kernel_options(opt);
  EXPECT_EQ(k.search, ConvImplSearch::kMeasured);
  EXPECT_NE(k.cache, nullptr);
  EXPECT_EQ(kernel_options(parsed({})).cache, nullptr);
  EXPECT_NE(error_of({"--kernel-choice=fastest"}).find("heuristic or measured"),
            std::string::npos);
}

// --bn-relu: fused by default.
TEST(TrainingOptions, BnRelu) {
  EXPECT_EQ(parsed({}).bn_relu, BnRelu::kFused);
  EXPECT_EQ(parsed({"--bn-relu=separate"}).bn_relu, BnRelu::kSeparate);
  EXPECT_EQ(parsed({"--bn-relu=fused"}).bn_relu, BnRelu::kFused);
  EXPECT_NE(error_of({"--bn-relu=both"}).find("fused or separate"),
            std::string::npos);
}

}  // namespace
}  // namespace distconv::examples
