// The check every kernel-compile test makes of one spec: it builds for sm_90a into an ELF cubin, and ptxas reports no
// spills, no stack frame, no serialized wgmma (C7510-C7515: correct results at a fraction of the speed, and nothing
// else says so) and no ignored setmaxnreg (C7508: the warp roles' register split is lost).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "jit/jit.hpp"
#include "tessera/options.hpp"

namespace tessera::test {

// False when NVRTC printed no ptxas report on this machine (the load-time local-memory check covers it then): the
// caller skips.
inline bool expect_clean_build(jit::Jit& j, const jit::KernelSpec& spec, CompilerKind kind) {
    SCOPED_TRACE(spec.describe());
    const jit::BuildResult r = j.build(spec);
    EXPECT_TRUE(r.compiled);
    EXPECT_GT(r.cubin.size(), 1000u);
    EXPECT_EQ(r.cubin.substr(0, 4), std::string("\x7f" "ELF"));
    const jit::PtxasUsage u = jit::parse_ptxas_usage(r.log);
    if (u.registers < 0 && kind == CompilerKind::kNvrtc) return false;
    EXPECT_GT(u.registers, 0) << r.log;
    EXPECT_EQ(u.spill_store_bytes + u.spill_load_bytes + u.stack_frame_bytes, 0) << r.log;
    EXPECT_FALSE(u.wgmma_serialized) << r.log;
    EXPECT_EQ(r.log.find("C7508"), std::string::npos) << r.log;
    return true;
}

inline constexpr const char* kNoPtxasReport =
    "NVRTC printed no ptxas report on this machine; the load-time local-memory check covers it";

}  // namespace tessera::test
