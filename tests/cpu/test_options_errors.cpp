// Option parsing from the environment, and the messages of argument checks.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <functional>
#include <utility>

#include "jit/compiler.hpp"
#include "ops/validate.hpp"
#include "runtime/driver.hpp"
#include "tessera/error.hpp"
#include "tessera/layout.hpp"
#include "tessera/options.hpp"

using namespace tessera;

namespace {

// Sets environment variables for one scope.
struct EnvScope {
    std::vector<std::string> names;
    EnvScope(std::initializer_list<std::pair<const char*, const char*>> vars) {
        for (auto [k, v] : vars) {
            ::setenv(k, v, 1);
            names.emplace_back(k);
        }
    }
    ~EnvScope() {
        for (const auto& n : names) ::unsetenv(n.c_str());
    }
};

std::string message_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const std::exception& e) {
        return e.what();
    }
    return "(no exception)";
}

}  // namespace

TEST(Options, TesseraAndDeepGemmNames) {
    {
        EnvScope env{{"TESSERA_JIT_COMPILER", "nvcc"}, {"TESSERA_CACHE_DIR", "/tmp/x"}};
        const Options o = Options::from_env();
        EXPECT_EQ(o.compiler, CompilerKind::kNvcc);
        EXPECT_EQ(o.cache_dir, "/tmp/x");
    }
    {
        EnvScope env{{"DG_JIT_USE_NVRTC", "0"}, {"DG_JIT_CACHE_DIR", "/tmp/dg"}, {"DG_PRINT_CONFIGS", "1"}};
        const Options o = Options::from_env();
        EXPECT_EQ(o.compiler, CompilerKind::kNvcc);
        EXPECT_EQ(o.cache_dir, "/tmp/dg");
        EXPECT_TRUE(o.print_configs);
    }
    {
        EnvScope env{{"DG_JIT_USE_NVRTC", "1"}, {"DG_JIT_PTXAS_CHECK", "1"}};
        const Options o = Options::from_env();
        EXPECT_EQ(o.compiler, CompilerKind::kNvrtc);
        EXPECT_TRUE(o.check_spills);
    }
    {
        EnvScope env{{"DG_JIT_NVCC_COMPILER", "/opt/nvcc"}};
        const Options o = Options::from_env();
        EXPECT_EQ(o.compiler, CompilerKind::kNvcc);
        EXPECT_EQ(o.nvcc_path, "/opt/nvcc");
    }
    {
        EnvScope env{{"TESSERA_CACHE_DIR", "/tmp/mine"}, {"DG_JIT_CACHE_DIR", "/tmp/theirs"}};
        EXPECT_EQ(Options::from_env().cache_dir, "/tmp/mine");  // the TESSERA_ name wins
    }
    EXPECT_TRUE(Options::from_env().dlpack_exchange);
    {
        EnvScope env{{"TESSERA_DLPACK_EXCHANGE", "0"}};
        EXPECT_FALSE(Options::from_env().dlpack_exchange);  // the binding's switch is read here, not in the binding
    }
}

TEST(Options, BadValuesNameTheVariable) {
    EnvScope env{{"TESSERA_JIT_COMPILER", "gcc"}};
    const std::string msg = message_of([] { Options::from_env(); });
    EXPECT_NE(msg.find("TESSERA_JIT_COMPILER"), std::string::npos) << msg;
    EXPECT_NE(msg.find("gcc"), std::string::npos) << msg;
    EnvScope flag{{"TESSERA_JIT_COMPILER", "nvrtc"}, {"DG_PRINT_CONFIGS", "maybe"}};
    EXPECT_THROW(Options::from_env(), InvalidArgument);
}

TEST(Validation, MessagesNameArgumentExpectationAndValue) {
    float storage[8];
    const TensorRef cpu_bf16 = make_tensor_ref(storage, DType::kBFloat16, {2, 4}, {DeviceKind::kCpu, 0});
    const std::string dtype_msg =
        message_of([&] { ops::check_dtype({"fp8_gemm_nt", "a"}, cpu_bf16, {DType::kFloat8E4M3}); });
    EXPECT_EQ(dtype_msg, "fp8_gemm_nt: argument 'a': expected dtype float8_e4m3fn, got bfloat16");
    EXPECT_THROW(ops::check_dtype({"op", "a"}, cpu_bf16, {DType::kFloat8E4M3}), TypeMismatch);
    const std::string device_msg = message_of([&] { ops::check_cuda({"fp8_gemm_nt", "b"}, cpu_bf16); });
    EXPECT_EQ(device_msg, "fp8_gemm_nt: argument 'b': expected a CUDA tensor, got a tensor on cpu");
    const TensorRef no_memory = make_tensor_ref(nullptr, DType::kFloat32, {3, 3}, {DeviceKind::kCuda, 0});
    EXPECT_EQ(message_of([&] { ops::check_cuda({"fp8_gemm_nt", "sfa"}, no_memory); }),
              "fp8_gemm_nt: argument 'sfa': expected a tensor with device memory, got a null data pointer for 9 "
              "elements");
    EXPECT_THROW(ops::check_cuda({"op", "d"}, no_memory), InvalidArgument);
    EXPECT_NO_THROW(ops::check_cuda({"op", "d"}, make_tensor_ref(nullptr, DType::kFloat32, {0, 3}, {DeviceKind::kCuda, 0})));
    const std::string ndim_msg = message_of([&] { ops::check_ndim({"op", "sf"}, cpu_bf16, {3}); });
    EXPECT_NE(ndim_msg.find("expected 3 dimensions, got 2 (shape [2, 4])"), std::string::npos) << ndim_msg;
    const TensorRef strided = make_tensor_ref(storage, DType::kFloat32, {2, 2}, {DeviceKind::kCuda, 0}, {1, 2});
    EXPECT_NE(message_of([&] { ops::check_contiguous({"op", "d"}, strided); }).find("strides [1, 2]"),
              std::string::npos);
}

TEST(Validation, LayoutOpsRejectBadInputBeforeTouchingTheDriver) {
    float storage[16];
    const TensorRef cpu = make_tensor_ref(storage, DType::kFloat32, {4, 4}, {DeviceKind::kCpu, 0});
    const TensorRef fake_cuda = make_tensor_ref(storage, DType::kFloat32, {4, 4}, {DeviceKind::kCuda, 0}, {1, 4});
    // CPU tensors, wrong dtype, wrong output strides: InvalidArgument, never a launch (no driver here is needed).
    EXPECT_THROW(transpose_sf_to_mn_major(cpu, fake_cuda, nullptr), InvalidArgument);
    const TensorRef int_sf = make_tensor_ref(storage, DType::kInt32, {4, 4}, {DeviceKind::kCuda, 0});
    EXPECT_THROW(transpose_sf_to_mn_major(int_sf, fake_cuda, nullptr), TypeMismatch);
    const TensorRef wrong_out = make_tensor_ref(storage, DType::kFloat32, {4, 4}, {DeviceKind::kCuda, 0});
    const TensorRef sf = make_tensor_ref(storage, DType::kFloat32, {4, 4}, {DeviceKind::kCuda, 0});
    const std::string msg = message_of([&] { transpose_sf_to_mn_major(sf, wrong_out, nullptr); });
    EXPECT_NE(msg.find("argument 'out'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("strides (..., 1, 4)"), std::string::npos) << msg;
    EXPECT_EQ(get_tma_aligned_size(4097, 4), 4100);
    EXPECT_EQ(get_tma_aligned_size(7, 1), 16);
    EXPECT_THROW(get_tma_aligned_size(7, 3), InvalidArgument);
}

TEST(Driver, MissingDriverIsAnErrorNotACrash) {
    if (runtime::driver_available()) GTEST_SKIP() << "a CUDA driver is present; this checks the no-driver path";
    const std::string msg = message_of([] { runtime::driver(); });
    EXPECT_TRUE(msg.find("no CUDA driver") != std::string::npos || msg.find("no CUDA device") != std::string::npos)
        << msg;
    EXPECT_THROW(runtime::driver(), CudaError);
}
