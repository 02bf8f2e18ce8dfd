// JIT cache: key sensitivity, framing, corrupt-entry recovery, insecure directories, concurrent publication.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "catalog/kernel_catalog.hpp"
#include "jit/disk_cache.hpp"
#include "jit/jit.hpp"
#include "ops/layout_specs.hpp"
#include "test_helpers.hpp"
#include "tessera/error.hpp"

namespace fs = std::filesystem;
using namespace tessera;

TEST(JitCacheKey, EditingAnIncludedHeaderChangesTheKey) {
    const fs::path kernels = test::make_temp_dir("tessera-kernels");
    fs::copy(TESSERA_TEST_KERNEL_DIR, kernels, fs::copy_options::recursive);
    const jit::KernelSpec& spec = ops::transpose_fp32_spec();
    const fs::path cache = test::make_temp_dir("tessera-cache");
    const std::string before = jit::Jit(test::test_options(cache, CompilerKind::kNvrtc, kernels)).key(spec);
    // common.cuh is included indirectly (through sm90/layout.cuh): the key must follow the include graph.
    test::append_to_file(kernels / "tessera" / "common.cuh", "\n// an edit\n");
    const std::string after = jit::Jit(test::test_options(cache, CompilerKind::kNvrtc, kernels)).key(spec);
    EXPECT_NE(before, after);
    fs::remove_all(kernels);
    fs::remove_all(cache);
}

TEST(JitCacheKey, UnrelatedSettingsDoNotChangeTheKey) {
    const fs::path cache = test::make_temp_dir("tessera-cache");
    const jit::KernelSpec& spec = ops::transpose_fp32_spec();
    Options a = test::test_options(cache);
    const std::string key_a = jit::Jit(a).key(spec);
    ::setenv("TESSERA_SOME_UNRELATED_VARIABLE", "1", 1);
    Options b = test::test_options(cache);
    b.print_configs = true;
    b.pdl = true;
    b.num_sms = 17;
    EXPECT_EQ(key_a, jit::Jit(b).key(spec));
    ::unsetenv("TESSERA_SOME_UNRELATED_VARIABLE");
    fs::remove_all(cache);
}

TEST(JitCacheKey, SpecValuesCompilerAndFlagsChangeTheKey) {
    const fs::path cache = test::make_temp_dir("tessera-cache");
    jit::Jit j(test::test_options(cache));
    jit::KernelSpec spec = ops::pack_ue8m0_spec();
    const std::string base = j.key(spec);
    spec.set("kNumThreads", 128);
    EXPECT_NE(base, j.key(spec));
    Options lineinfo = test::test_options(cache);
    lineinfo.line_info = true;
    EXPECT_NE(base, jit::Jit(lineinfo).key(ops::pack_ue8m0_spec()));
    EXPECT_NE(base, jit::Jit(test::test_options(cache, CompilerKind::kNvcc)).key(ops::pack_ue8m0_spec()));
    fs::remove_all(cache);
}

TEST(JitSpec, RenderIsNamedAndDeterministic) {
    jit::KernelSpec spec(jit::Family::kFp8Gemm);
    spec.set("kBlockM", 128).set("kBlockN", 112);
    const std::string src = spec.render();
    EXPECT_NE(src.find("#include <tessera/sm90/fp8_gemm.cuh>"), std::string::npos);
    EXPECT_NE(src.find("static constexpr int kBlockN = 112;"), std::string::npos);
    EXPECT_NE(src.find("tessera_sm90_fp8_gemm_kernel("), std::string::npos);
    EXPECT_EQ(src, spec.render());
    jit::KernelSpec same(jit::Family::kFp8Gemm);
    same.set("kBlockM", 128).set("kBlockN", 112);
    EXPECT_EQ(spec, same);
    EXPECT_EQ(spec.hash(), same.hash());
    same.set("kBlockN", 128);
    EXPECT_FALSE(spec == same);
}

TEST(DiskCacheFraming, DetectsTruncationAndCorruption) {
    const std::string cubin(1000, '\x7f');
    const std::string framed = jit::frame_cubin(cubin);
    ASSERT_TRUE(jit::unframe_cubin(framed).has_value());
    EXPECT_EQ(*jit::unframe_cubin(framed), cubin);
    EXPECT_FALSE(jit::unframe_cubin(framed.substr(0, framed.size() - 1)).has_value());
    std::string flipped = framed;
    flipped[framed.size() / 2] ^= 1;
    EXPECT_FALSE(jit::unframe_cubin(flipped).has_value());
    EXPECT_FALSE(jit::unframe_cubin("").has_value());
}

TEST(DiskCache, CorruptEntryIsRebuiltNotLoaded) {
    const fs::path cache = test::make_temp_dir("tessera-cache");
    jit::Jit j(test::test_options(cache));
    const jit::KernelSpec& spec = ops::transpose_fp32_spec();
    const jit::BuildResult first = j.build(spec);
    EXPECT_TRUE(first.compiled);
    EXPECT_FALSE(j.build(spec).compiled);  // now a disk hit
    const fs::path cubin = cache / first.key / "kernel.cubin";
    ASSERT_TRUE(fs::exists(cubin));
    fs::resize_file(cubin, fs::file_size(cubin) / 2);  // a crash mid-write on a filesystem without rename
    const jit::BuildResult rebuilt = j.build(spec);
    EXPECT_TRUE(rebuilt.compiled);
    EXPECT_EQ(rebuilt.cubin.substr(0, 4), std::string("\x7f" "ELF"));
    EXPECT_FALSE(j.build(spec).compiled);
    fs::remove_all(cache);
}

TEST(DiskCache, RefusesDirectoryWritableByOthers) {
    const fs::path dir = test::make_temp_dir("tessera-cache");
    ::chmod(dir.c_str(), 0777);
    try {
        jit::DiskCache cache(dir.string());
        FAIL() << "an other-writable cache directory was accepted";
    } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("writable by group or others"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find(dir.string()), std::string::npos) << e.what();
    }
    ::chmod(dir.c_str(), 0700);
    EXPECT_NO_THROW(jit::DiskCache cache(dir.string()));
    fs::remove_all(dir);
}

TEST(DiskCache, CreatesPrivateDirectory) {
    const fs::path parent = test::make_temp_dir("tessera-cache-parent");
    const fs::path dir = parent / "nested" / "cache";
    jit::DiskCache cache(dir.string());
    struct stat st {};
    ASSERT_EQ(::stat(dir.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0700u);
    fs::remove_all(parent);
}

TEST(DiskCache, ConcurrentProcessesCompilingTheSameSpecAllSucceed) {
    const fs::path cache = test::make_temp_dir("tessera-cache");
    const jit::KernelSpec& spec = ops::pack_ue8m0_k_grouped_spec();
    constexpr int kProcesses = 4;
    pid_t children[kProcesses];
    for (pid_t& child : children) {
        child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            int code = 1;
            try {
                jit::Jit j(test::test_options(cache));
                code = j.build(spec).cubin.empty() ? 2 : 0;
            } catch (...) {
                code = 3;
            }
            _exit(code);
        }
    }
    for (pid_t child : children) {
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    }
    jit::Jit j(test::test_options(cache));
    EXPECT_FALSE(j.build(spec).compiled) << "the published entry should be valid";
    // No temporary files are left behind by the racers.
    for (const auto& entry : fs::recursive_directory_iterator(cache))
        EXPECT_EQ(entry.path().filename().string().rfind(".tmp-", 0), std::string::npos) << entry.path();
    fs::remove_all(cache);
}

// describe() and parse() are inverses over every catalog kernel (the post-compile pass aside, which the line does
// not carry).
TEST(KernelSpec, ParseReadsBackEveryCatalogLine) {
    for (jit::KernelSpec spec : catalog::catalog_specs("all")) {
        SCOPED_TRACE(spec.describe());
        spec.post = {};
        EXPECT_EQ(jit::KernelSpec::parse(spec.describe()), spec);
    }
}
