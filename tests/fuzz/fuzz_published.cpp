// libFuzzer target: a published training-throughput table through
// ts::predictors::readPublishedRows and the built-in mapping, and the same bytes as a mapping file
// (validate-published --mapping) applied to a fixed table, and as an interval table whose fitted GPUs
// --write-out-of-sample-errors reads.
#include "fuzz_common.h"
#include "trainscope/core/errors.h"
#include "trainscope/predictors/published/published_validation.h"

namespace {

const std::vector<ts::predictors::PublishedRow>& fixedRows() {
    static const std::vector<ts::predictors::PublishedRow> rows = [] {
        ts::predictors::PublishedRow r;
        r.file = "fixed.csv", r.line = 2, r.index = 0, r.model = "ResNet-50 v1.5", r.gpu = "A100 80GB SXM4";
        r.gpuSystem = "DGX A100", r.gpuCount = 8, r.precision = "AMP", r.unit = "img/s", r.throughput = 16621;
        return std::vector<ts::predictors::PublishedRow>{r};
    }();
    return rows;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const ts::GpuDatabase& db = ts::GpuDatabase::builtin();
    const std::string& path = ts::fuzz::writeTempFile(data, size, ".csv");
    try {
        const std::vector<ts::predictors::PublishedRow> rows = ts::predictors::readPublishedRows({path});
        ts::predictors::mapPublishedRows(rows, ts::predictors::builtinPublishedMapping(), db);
    } catch (const ts::ModelError&) {
    }
    const nlohmann::json mapping = nlohmann::json::parse(data, data + size, nullptr, false);
    if (mapping.is_discarded()) return 0;
    try {
        ts::predictors::mapPublishedRows(fixedRows(), mapping, db, "fuzz mapping");
    } catch (const ts::ModelError&) {
    }
    try {  // the same bytes as an interval table (validate-published --write-out-of-sample-errors)
        ts::predictors::fittedGpusOf(mapping, "fuzz table");
    } catch (const ts::ModelError&) {
    }
    return 0;
}
