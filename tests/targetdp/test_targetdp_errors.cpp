// Bad input to targetDP: each is a tessera::Error (C++) or a status with a message (C) that
// names the call, the target and what was wrong; nothing crashes and the target stays usable.

#include <tessera/targetdp.h>

#include <gtest/gtest.h>

#include "../support/error_of.hpp"

#include <string>
#include <vector>

namespace {

using tessera::test::error_of;

void expect_mentions(const std::string& message, std::initializer_list<const char*> words) {
  for (const char* w : words) EXPECT_NE(message.find(w), std::string::npos) << "'" << w << "' not in: " << message;
}

class TargetDPErrors : public ::testing::TestWithParam<const char*> {
protected:
  void SetUp() override { targetInit(GetParam()); }
  void TearDown() override { targetFinalize(); }
};

TEST_P(TargetDPErrors, FreeingAPointerThatIsNotATargetAllocationIsRefused) {
  double host = 0;
  expect_mentions(error_of([&] { targetFree(&host); }), {"targetFree", "not an allocation of targetMalloc"});
  void* t = nullptr;
  targetMalloc(&t, 64);
  targetFree(t);
  expect_mentions(error_of([&] { targetFree(t); }), {"targetFree", "freed twice"});
  targetFree(nullptr);  // as free(NULL)
}

TEST_P(TargetDPErrors, CopiesOutsideTheAllocationNameTheSizes) {
  double* t = nullptr;
  targetMalloc((void**)&t, 10 * sizeof(double));
  std::vector<double> h(20);
  expect_mentions(error_of([&] { copyToTarget(t, h.data(), 20 * sizeof(double)); }),
                  {"copyToTarget", "160 bytes", "overrun", "80 bytes"});
  expect_mentions(error_of([&] { copyFromTarget(h.data(), t + 5, 6 * sizeof(double)); }),
                  {"copyFromTarget", "offset 40", "overrun"});
  expect_mentions(error_of([&] { copyToTarget(h.data(), t, 8); }), {"copyToTarget", "not in any allocation"});
  expect_mentions(error_of([&] { copyToTarget(t, nullptr, 8); }), {"copyToTarget", "host pointer is null"});
  copyToTarget(t, h.data(), 10 * sizeof(double));  // still usable
  targetFree(t);
}

TEST_P(TargetDPErrors, AMaskOfTheWrongSizeIsRefusedBeforeAnythingMoves) {
  const size_t nsites = 16;
  double* t = nullptr;
  targetCalloc((void**)&t, 2 * nsites * sizeof(double));
  std::vector<double> h(2 * nsites, 5.0);
  std::vector<char> mask(nsites - 1, 1);
  expect_mentions(error_of([&] { copyToTargetMasked(t, h.data(), nsites, 2, mask.data(), mask.size()); }),
                  {"copyToTargetMasked", "15 entries", "16 sites"});
  expect_mentions(error_of([&] { copyFromTargetMasked(h.data(), t, nsites, 2, nullptr, nsites); }),
                  {"copyFromTargetMasked", "mask is null"});
  std::vector<char> full(nsites, 1);
  expect_mentions(error_of([&] { copyToTargetMasked(t, h.data(), nsites, 3, full.data(), full.size()); }),
                  {"copyToTargetMasked", "overrun"});
  std::vector<double> back(2 * nsites, 1.0);
  copyFromTarget(back.data(), t, back.size() * sizeof(double));
  for (double x : back) ASSERT_EQ(x, 0.0) << "a refused masked copy moved data";
  targetFree(t);
}

TEST_P(TargetDPErrors, ChangingTheTargetWithLiveAllocationsIsRefused) {
  void* t = nullptr;
  targetMalloc(&t, 8);
  expect_mentions(error_of([&] { targetInit("host"); }), {"targetInit", "1 allocation", "targetFree"});
  targetFree(t);
}

TEST_P(TargetDPErrors, ACudaKernelOnANonCudaTargetSaysWhatToDo) {
  EXPECT_EQ(tdp_cuda_stream("kernel.cu:12"), nullptr);
  expect_mentions(tdp_last_error(), {"kernel.cu:12", "CUDA target", "TESSERA_DEVICES"});
}

TEST_P(TargetDPErrors, NullArgumentsAreNamed) {
  expect_mentions(error_of([&] { targetMalloc(nullptr, 8); }), {"targetMalloc", "null"});
  expect_mentions(error_of([&] { copyConstantDoubleToTarget(nullptr, nullptr, 8); }),
                  {"copyConstantDoubleToTarget", "null"});
  EXPECT_EQ(tdp_launch(8, VVL, nullptr, nullptr, 0, "nothing"), tdpErrorInvalidValue);
  expect_mentions(tdp_last_error(), {"nothing", "kernel is null"});
  EXPECT_EQ(tdp_launch(8, 0, [](void*) {}, nullptr, 0, "zero vvl"), tdpErrorInvalidValue);
  expect_mentions(tdp_last_error(), {"VVL is 0"});
}

INSTANTIATE_TEST_SUITE_P(Targets, TargetDPErrors, ::testing::Values("host", "sim:1"), [](const auto& p) {
  std::string name = p.param;
  for (char& c : name)
    if (c == ':') c = '_';
  return name;
});

TEST(TargetDPErrorsOnSmallDevice, AnAllocationThatDoesNotFitTheDeviceNamesSizesAndTarget) {
  targetInit("sim:1:1MiB");
  void* t = nullptr;
  EXPECT_EQ(tdp_malloc(&t, std::size_t{8} << 20), tdpErrorMemory);
  expect_mentions(tdp_last_error(), {"targetMalloc", "8388608 bytes do not fit", "sim:0"});
  // The device is still usable for what fits.
  targetMalloc(&t, 1024);
  targetFree(t);
  targetFinalize();
}

TEST(TargetDPErrorsOnSelection, ABadSelectionIsNamed) {
  EXPECT_EQ(tdp_init("sim:x"), tdpErrorTarget);
  expect_mentions(tdp_last_error(), {"targetInit", "sim:x"});
  EXPECT_STREQ(tdp_target_name(), "host") << "after a failed selection the default target is used";
  targetFinalize();
}

}  // namespace
