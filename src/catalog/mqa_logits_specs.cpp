// The non-paged MQA logits kernels of DeepGEMM's test (test_attention.py): S in {2048, 8192}, S_kv in {8192, 65536},
// H in {32, 64}, D in {32, 64, 128}, FP32 and BF16 logits (the compressed layout is a run-time switch of the same
// kernels), as the op plans them; and the clean kernel for both logits dtypes.
#include <algorithm>

#include "catalog/family_specs.hpp"
#include "heuristics/mqa_logits_plan.hpp"
#include "ops/fp8_gemm_specs.hpp"
#include "ops/mqa_logits_specs.hpp"

namespace tessera::catalog {

std::vector<jit::KernelSpec> mqa_logits_specs(int num_sms) {
    std::vector<jit::KernelSpec> specs;
    const auto add = [&](const jit::KernelSpec& spec) {
        if (std::find(specs.begin(), specs.end(), spec) == specs.end()) specs.push_back(spec);
    };
    for (bool bf16 : {true, false})
        for (std::int64_t s : {2048, 8192})
            for (std::int64_t s_kv : {8192, 65536})
                for (int h : {32, 64})
                    for (int d : {32, 64, 128}) {
                        heuristics::MqaLogitsProblem p{s, s_kv, h, d, bf16, num_sms, ops::kSm90MaxSmemBytes};
                        add(ops::mqa_logits_spec(heuristics::choose_mqa_logits_config(p)));
                    }
    for (bool bf16 : {true, false}) add(ops::clean_logits_spec(bf16));
    return specs;
}

}  // namespace tessera::catalog
