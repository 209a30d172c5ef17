#include "perf/bench_options.h"

#include <gtest/gtest.h>

#include "distconv/error.h"

namespace distconv {
namespace {

TEST(BenchOptions, ParsesEveryOption) {
  const BenchOptions o = parse_bench_options(
      {"--conv", "--grid=2x1x2x1", "--dir=bwd_w", "--dt=f64", "--mode=perf",
       "--overlap=off", "--input=in_place", "--kernel-choice=measured",
       "--kernel-cache=k.cache", "--channels=stationary_weights",
       "--channel-blocks=2", "--json", "--dump-dir=/tmp/x", "--dump-format=h5",
       "--warmup=0", "--reps=3", "mb2ic4ih8oc4kh3ph1",
       "g2mb2ic8ih12oc6kh3ph1"});
  ASSERT_EQ(o.problems.size(), 2u);
  EXPECT_EQ(o.grid, (Shape{2, 1, 2, 1}));
  EXPECT_EQ(o.dir, BenchDir::kBackwardWeights);
  EXPECT_EQ(o.dt, BenchDataType::kF64);
  EXPECT_EQ(o.mode, BenchMode::kPerf);
  EXPECT_EQ(o.overlap, ConvOverlap::kNone);
  EXPECT_EQ(o.input, ConvInput::kInPlace);
  EXPECT_EQ(o.cpu.search, ConvImplSearch::kMeasured);
  EXPECT_EQ(o.kernel_cache, "k.cache");
  EXPECT_EQ(o.channels, ChannelParallelism::kStationaryWeights);
  EXPECT_EQ(o.channel_blocks, 2);
  EXPECT_TRUE(o.json);
  EXPECT_EQ(o.dump_dir, "/tmp/x");
  EXPECT_EQ(o.dump_format, DumpFormat::kHdf5);
  EXPECT_EQ(o.warmup, 0);
  EXPECT_EQ(o.reps, 3);
  EXPECT_EQ(o.problems[1].desc.groups, 2);
}

TEST(BenchOptions, PoolingImplementation) {
  EXPECT_FALSE(parse_bench_options({"--pool", "mb1ic1ih4kh2sh2"}).pool_impl);
  const BenchOptions o = parse_bench_options(
      {"--pool", "--pool-impl=one_call", "mb1ic1ih4kh2sh2"});
  EXPECT_EQ(o.pool_impl, PoolImpl::kOneCall);
  EXPECT_EQ(parse_bench_options(
                {"--pool", "--kernel-choice=measured", "mb1ic1ih4kh2sh2"})
                .cpu.search,
            ConvImplSearch::kMeasured);
}

TEST(BenchOptions, DefaultsSplitNothingButRanksAlongH) {
  const BenchOptions o = parse_bench_options({"mb1ic16ih64oc16kh3ph1"});
  EXPECT_EQ(o.grid.ndims(), 0);
  EXPECT_EQ(o.dir, BenchDir::kAll);
  EXPECT_EQ(o.mode, BenchMode::kCorrectness);
  EXPECT_EQ(o.overlap, ConvOverlap::kInteriorFirst);
  EXPECT_EQ(o.input, ConvInput::kHaloBuffer);
  EXPECT_EQ(o.cpu.search, ConvImplSearch::kHeuristic);
  EXPECT_EQ(o.kernel_cache, "");
  EXPECT_EQ(o.channels, ChannelParallelism::kStationaryOutput);
  EXPECT_FALSE(parse_bench_options({"--help"}).problems.size());
}

TEST(BenchOptions, DriversParseTheirOwnDescriptors) {
  const BenchOptions pool = parse_bench_options(
      {"--pool", "--alg=avg_np", "--dir=fwd", "mb1ic16ih512kh3sh2ph1"});
  EXPECT_EQ(pool.driver, ProblemKind::kPooling);
  EXPECT_EQ(pool.alg, PoolKind::kAverageExcludePadding);
  EXPECT_EQ(pool.problems[0].kind, ProblemKind::kPooling);
  const BenchOptions up =
      parse_bench_options({"--deconv", "mb1ic32ih64oc16kh4sh2ph1"});
  EXPECT_EQ(up.problems[0].kind, ProblemKind::kDeconvolution);
  EXPECT_EQ(up.problems[0].src_shape, (Shape{1, 16, 128, 128}));
  // --alg may come before the driver; it is read for the driver given.
  const BenchOptions cat =
      parse_bench_options({"--alg=concat", "--eltwise", "mb2ic8ih32"});
  EXPECT_EQ(cat.driver, ProblemKind::kElementwise);
  EXPECT_EQ(cat.eltwise_alg, EltwiseAlg::kConcat);
  EXPECT_EQ(cat.problems[0].src_shape, (Shape{2, 8, 32, 32}));
  EXPECT_EQ(to_string(cat.problems[0]), "mb2_ic8ih32iw32");
  const BenchOptions interp =
      parse_bench_options({"--interp", "--input=in_place", "mb1ic16ih64"});
  EXPECT_EQ(interp.driver, ProblemKind::kInterpolate);
  EXPECT_EQ(interp.problems[0].kind, ProblemKind::kInterpolate);
  EXPECT_EQ(interp.problems[0].src_shape, (Shape{1, 16, 64, 64}));
  EXPECT_EQ(to_string(interp.problems[0]), "mb1_ic16ih64iw64");
}

// --padding-mode=circular reaches every problem's description, and the
// pooling and transposed-convolution descriptions made from it.
TEST(BenchOptions, CircularPaddingInEveryProblem) {
  const BenchOptions o = parse_bench_options(
      {"--pool", "--padding-mode=circular", "mb1ic2ih8iw6kh3kw3ph1pw1",
       "mb1ic2id4ih4iw4kd3kh3kw3pd1ph1pw1"});
  EXPECT_EQ(o.padding_mode, PaddingMode::kCircular);
  for (const ConvProblem& p : o.problems) {
    const PoolDesc pool = pool_desc(p, PoolKind::kMax);
    for (int j = 0; j < p.desc.spatial_dims(); ++j) {
      EXPECT_TRUE(p.desc.circular(j) && pool.circular(j));
    }
  }
  const BenchOptions d = parse_bench_options(
      {"--deconv", "--padding-mode=circular", "mb1ic2ih8oc4kh4sh2ph1"});
  EXPECT_TRUE(deconv_desc(d.problems[0]).circular(1));
  EXPECT_EQ(parse_bench_options({"mb1ic1ih4oc1kh1"}).padding_mode,
            PaddingMode::kZeros);
}

TEST(BenchOptions, ReducedPrecisionTypes) {
  EXPECT_EQ(parse_bench_options({"--dt=bf16", "mb1ic1ih4oc1kh1"}).dt,
            BenchDataType::kBf16);
  EXPECT_EQ(parse_bench_options({"--dt=f16", "mb1ic1ih4oc1kh1"}).dt,
            BenchDataType::kF16);
  EXPECT_EQ(parse_bench_options(
                {"--dt=bf16", "--impl=onednn", "--mode=perf", "mb1ic1ih4oc1kh1"})
                .impl,
            BenchImpl::kOnednn);
  EXPECT_EQ(parse_bench_options({"--eltwise", "--dt=bf16", "mb1ic1ih4"}).dt,
            BenchDataType::kBf16);
  EXPECT_EQ(parse_bench_options({"--interp", "--dt=f16", "mb1ic1ih4"}).dt,
            BenchDataType::kF16);
  EXPECT_EQ(to_string(BenchDataType::kBf16), "bf16");
}

TEST(BenchOptions, DeviceAndItsBaseline) {
  const BenchOptions cpu = parse_bench_options({"mb1ic16ih64oc16kh3ph1"});
  EXPECT_EQ(cpu.device, BenchDevice::kCpu);
  EXPECT_EQ(cpu.gpu_math, GpuMath::kStrict);
  const BenchOptions gpu = parse_bench_options(
      {"--pool", "--device=gpu", "--impl=cudnn", "--mode=perf",
       "mb1ic16ih64kh3ph1"});
  EXPECT_EQ(gpu.device, BenchDevice::kGpu);
  EXPECT_EQ(gpu.impl, BenchImpl::kCudnn);
  EXPECT_EQ(to_string(gpu.impl), "cudnn");
  EXPECT_EQ(to_string(gpu.device), "gpu");
  EXPECT_EQ(parse_bench_options({"--device=gpu", "--math=tf32", "--dt=f64",
                                 "mb1ic16ih64oc16kh3ph1"})
                .gpu_math,
            GpuMath::kTf32);
  EXPECT_EQ(parse_bench_options({"mb1ic16ih64oc16kh3ph1"}).transport,
            HaloTransport::kDefault);
  EXPECT_EQ(parse_bench_options({"--device=gpu", "--dt=bf16",
                                 "mb1ic16ih64oc16kh3ph1"})
                .dt,
            BenchDataType::kBf16);
  EXPECT_EQ(parse_bench_options({"--device=gpu", "--transport=cuda_ipc",
                                 "mb1ic16ih64oc16kh3ph1"})
                .transport,
            HaloTransport::kCudaIpc);
  EXPECT_EQ(parse_bench_options({"--transport=mpi_datatypes",
                                 "mb1ic16ih64oc16kh3ph1"})
                .transport,
            HaloTransport::kMpiDatatypes);
}

TEST(BenchOptions, BadArgumentsAreNamed) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"--dir=up", "mb1ic1ih4oc1kh1"},
           {"--channels=stationary", "mb1ic1ih4oc1kh1"},
           {"--channel-blocks=0", "mb1ic1ih4oc1kh1"},
           {"--grid=2x2", "mb1ic1ih4oc1kh1"},
           {"--grid=2xx1x1", "mb1ic1ih4oc1kh1"},
           {"--reps=0", "mb1ic1ih4oc1kh1"},
           {"--dump-format=zarr", "mb1ic1ih4oc1kh1"},
           {"--transport=ipc", "mb1ic1ih4oc1kh1"},
           {"--frobnicate", "mb1ic1ih4oc1kh1"},
           {"--impl=onednn", "--dt=f64", "mb1ic1ih4oc1kh1"},
           {"--dt=f8", "mb1ic1ih4oc1kh1"},
           {"--eltwise", "--dt=bf16", "--impl=onednn", "mb1ic1ih4"},
           {"--pool", "--dt=f16", "mb1ic1ih4kh1"},
           {"--bnorm", "--dt=f16", "mb1ic1ih4"},
           {"--pool", "--dt=bf16", "--impl=onednn", "mb1ic1ih4kh1"},
           {"--dt=bf16", "--dump-dir=/tmp/d", "mb1ic1ih4oc1kh1"},
           {"--padding-mode=reflect", "mb1ic1ih4oc1kh1"},
           {"--padding-mode=circular", "--impl=onednn", "mb1ic1ih4oc1kh1"},
           {"--bnorm", "--padding-mode=circular", "mb1ic1ih4"},
           {"--padding-mode=circular", "mb1ic1ih4oc1kh3ph5"},
           {"--json"},
           {"mb1ic1ih4oc1kh1", "--pool"},
           {"--pool", "--dir=bwd_w", "mb1ic1ih4kh1"},
           {"--pool", "--alg=min", "mb1ic1ih4kh1"},
           {"--pool", "--alg=relu", "mb1ic1ih4kh1"},
           {"--eltwise", "--alg=max", "mb1ic1ih4"},
           {"--eltwise", "--dir=bwd_w", "mb1ic1ih4"},
           {"--eltwise", "mb1ic1ih4kh3"},
           {"--gnorm", "--impl=onednn", "g1mb1ic2ih4"},
           {"--gnorm", "--device=gpu", "g1mb1ic2ih4"},
           {"--gnorm", "--dir=bwd_w", "g1mb1ic2ih4"},
           {"--gnorm", "g3mb1ic2ih4"},
           {"--interp", "--impl=onednn", "mb1ic1ih4"},
           {"--interp", "--device=gpu", "mb1ic1ih4"},
           {"--interp", "--dir=bwd_w", "mb1ic1ih4"},
           {"--interp", "mb1ic1ih4oh8"},
           {"--alg=max", "mb1ic1ih4oc1kh1"},
           {"--device=tpu", "mb1ic1ih4oc1kh1"},
           {"--input=frames", "mb1ic1ih4oc1kh1"},
           {"--input=in_place", "--bnorm", "mb1ic1ih4"},
           {"--input=in_place", "--device=gpu", "mb1ic1ih4oc1kh1"},
           {"--kernel-choice=fastest", "mb1ic1ih4oc1kh1"},
           {"--kernel-choice=measured", "--pool", "--pool-impl=slabs",
            "mb1ic1ih4kh1"},
           {"--kernel-choice=measured", "--eltwise", "mb1ic1ih4"},
           {"--pool-impl=slabs", "mb1ic1ih4oc1kh1"},
           {"--pool", "--pool-impl=slabs", "--device=gpu", "mb1ic1ih4kh1"},
           {"--pool", "--pool-impl=fastest", "mb1ic1ih4kh1"},
           {"--kernel-choice=measured", "--device=gpu", "mb1ic1ih4oc1kh1"},
           {"--kernel-cache=k.cache", "mb1ic1ih4oc1kh1"},
           {"--kernel-cache=", "--kernel-choice=measured", "mb1ic1ih4oc1kh1"},
           {"--math=fp8", "--device=gpu", "mb1ic1ih4oc1kh1"},
           {"--math=tf32", "mb1ic1ih4oc1kh1"},
           {"--impl=cuda", "mb1ic1ih4oc1kh1"},
           {"--impl=cudnn", "mb1ic1ih4oc1kh1"},
           {"--impl=onednn", "--device=gpu", "mb1ic1ih4oc1kh1"},
           {"--device=gpu", "--dt=f16", "mb1ic1ih4oc1kh1"},
           {"--device=gpu", "--impl=cudnn", "--dt=bf16", "mb1ic1ih4oc1kh1"},
           {"--device=gpu", "--impl=cudnn", "--dt=f64", "mb1ic1ih4oc1kh1"},
           {"--device=gpu", "--check=serial", "mb1ic1ih4oc1kh1"},
           {"--device=gpu", "--dump-dir=/tmp/d", "mb1ic1ih4oc1kh1"},
           {"--device=gpu", "--impl=cudnn", "--padding-mode=circular",
            "mb1ic1ih4oc1kh3ph1"},
           {"mb1ic1oc1kh1"}}) {
    EXPECT_THROW(parse_bench_options(args), Error) << args[0];
  }
}

}  // namespace
}  // namespace distconv
