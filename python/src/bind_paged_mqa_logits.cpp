// The paged MQA logits family: the schedule (get_paged_mqa_logits_metadata) and the logits kernel. Python allocates
// the outputs (tessera/paged_mqa_logits.py); these only validate and launch.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>

#include <cstdint>
#include <optional>

#include "tensor_refs.hpp"
#include "tessera/paged_mqa_logits.hpp"

namespace nb = nanobind;

namespace tessera::py {

void bind_paged_mqa_logits(nb::module_& m) {
    m.def(
        "paged_mqa_logits_metadata",
        [](nb::handle context_lens, int block_kv, int num_sms, nb::handle schedule,
           std::optional<std::uintptr_t> stream) {
            const TensorRef rc = to_ref(context_lens, "context_lens"), rs = to_ref(schedule, "schedule");
            const Stream s = stream_for(rc, stream);
            nb::gil_scoped_release release;
            get_paged_mqa_logits_metadata(rc, block_kv, num_sms, rs, s);
        },
        nb::arg("context_lens"), nb::arg("block_kv"), nb::arg("num_sms"), nb::arg("schedule"),
        nb::arg("stream") = nb::none());
    m.def(
        "paged_mqa_logits",
        [](nb::handle q, nb::handle kv_cache, nb::handle weights, nb::handle context_lens, nb::handle block_table,
           nb::handle schedule, std::int64_t max_context_len, bool clean_logits, nb::handle logits,
           std::optional<std::uintptr_t> stream) {
            const TensorRef rq = to_ref(q, "q"), rkv = to_ref(kv_cache, "kv_cache"), rw = to_ref(weights, "weights"),
                            rc = to_ref(context_lens, "context_lens"), rt = to_ref(block_table, "block_table"),
                            rs = to_ref(schedule, "schedule_meta"), rl = to_ref(logits, "logits");
            const Stream s = stream_for(rq, stream);
            nb::gil_scoped_release release;
            fp8_paged_mqa_logits(rq, rkv, rw, rc, rt, rs, max_context_len, clean_logits, rl, s);
        },
        nb::arg("q"), nb::arg("kv_cache"), nb::arg("weights"), nb::arg("context_lens"), nb::arg("block_table"),
        nb::arg("schedule_meta"), nb::arg("max_context_len"), nb::arg("clean_logits"), nb::arg("logits"),
        nb::arg("stream") = nb::none());
    m.def("paged_mqa_logits_row_stride", [](std::int64_t max_context_len, bool bf16) {
        return paged_mqa_logits_row_stride(max_context_len, bf16 ? DType::kBFloat16 : DType::kFloat32);
    }, nb::arg("max_context_len"), nb::arg("bf16"));
}

}  // namespace tessera::py
