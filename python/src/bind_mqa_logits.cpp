// The non-paged MQA logits family (DeepGEMM's fp8_fp4_mqa_logits on SM90) and its clean kernel. Python allocates
// the output buffer and the work counter (tessera/mqa_logits.py); these only validate and launch.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>

#include "tensor_refs.hpp"
#include "tessera/mqa_logits.hpp"

namespace nb = nanobind;

namespace tessera::py {

void bind_mqa_logits(nb::module_& m) {
    m.def(
        "mqa_logits",
        [](nb::handle q, nb::handle kv, nb::handle kv_sf, nb::handle weights, nb::handle cu_seq_len_k_start,
           nb::handle cu_seq_len_k_end, nb::handle logits, nb::handle workspace, bool clean_logits,
           std::int64_t max_seqlen_k, std::optional<std::uintptr_t> stream) {
            // In argument order, so that an error names the first bad argument.
            const TensorRef rq = to_ref(q, "q"), rkv = to_ref(kv, "kv"), rsf = to_ref(kv_sf, "kv_sf"),
                            rw = to_ref(weights, "weights"), rks = to_ref(cu_seq_len_k_start, "cu_seq_len_k_start"),
                            rke = to_ref(cu_seq_len_k_end, "cu_seq_len_k_end"), rl = to_ref(logits, "logits"),
                            rws = to_ref(workspace, "workspace");
            const Stream s = stream_for(rq, stream);
            nb::gil_scoped_release release;
            fp8_mqa_logits(rq, rkv, rsf, rw, rks, rke, rl, rws, clean_logits, max_seqlen_k, s);
        },
        nb::arg("q"), nb::arg("kv"), nb::arg("kv_sf"), nb::arg("weights"), nb::arg("cu_seq_len_k_start"),
        nb::arg("cu_seq_len_k_end"), nb::arg("logits"), nb::arg("workspace"), nb::arg("clean_logits"),
        nb::arg("max_seqlen_k"), nb::arg("stream") = nb::none());
    m.def(
        "clean_logits",
        [](nb::handle logits, nb::handle cu_seq_len_k_start, nb::handle cu_seq_len_k_end,
           std::optional<std::uintptr_t> stream) {
            const TensorRef rl = to_ref(logits, "logits");
            const std::optional<TensorRef> rks = to_optional_ref(cu_seq_len_k_start, "cu_seq_len_k_start");
            const TensorRef rke = to_ref(cu_seq_len_k_end, "cu_seq_len_k_end");
            const Stream s = stream_for(rl, stream);
            nb::gil_scoped_release release;
            clean_logits(rl, rks ? &*rks : nullptr, rke, s);
        },
        nb::arg("logits"), nb::arg("cu_seq_len_k_start").none(), nb::arg("cu_seq_len_k_end"),
        nb::arg("stream") = nb::none());
    m.def("mqa_logits_row_stride", [](std::int64_t seq_len_kv, std::int64_t max_seqlen_k, bool bf16) {
        return mqa_logits_row_stride(seq_len_kv, max_seqlen_k, bf16 ? DType::kBFloat16 : DType::kFloat32);
    }, nb::arg("seq_len_kv"), nb::arg("max_seqlen_k"), nb::arg("bf16"));
    m.def("mqa_logits_buffer_rows", &mqa_logits_buffer_rows, nb::arg("seq_len"), nb::arg("num_heads"));
    m.def("mqa_logits_config", &mqa_logits_config, nb::arg("seq_len"), nb::arg("seq_len_kv"), nb::arg("num_heads"),
          nb::arg("head_dim"), nb::arg("bf16_logits"), nb::arg("device"));
}

}  // namespace tessera::py
