// The paged MQA logits kernels of DeepGEMM's test (next_n 1 and 2, 32 and 64 heads, D = 128, FP32 and BF16 logits)
// as fp8_paged_mqa_logits plans them on an H200, with and without clean_logits, and the schedule kernel. The SM count
// is a run-time value of both kernels, so it does not change the list.
#include "catalog/family_specs.hpp"
#include "ops/paged_mqa_logits_specs.hpp"

namespace tessera::catalog {

std::vector<jit::KernelSpec> paged_mqa_logits_specs(int) {
    constexpr int kH200MaxSmem = 232448;
    std::vector<jit::KernelSpec> specs;
    for (bool clean : {false, true})
        for (int next_n : {1, 2})
            for (int heads : {32, 64})
                for (bool bf16 : {true, false})
                    specs.push_back(ops::paged_mqa_logits_spec(next_n, heads, bf16, clean, kH200MaxSmem));
    specs.push_back(ops::paged_mqa_metadata_spec());
    return specs;
}

}  // namespace tessera::catalog
