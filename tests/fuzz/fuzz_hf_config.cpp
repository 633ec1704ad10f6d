// libFuzzer target: a Hugging Face config.json through ts::importHfConfigText, then the costs of the
// graph it builds (the RMSNorm, rotary, attention and mixture-of-experts operators' cost code included).
// A quarter of the inputs (by length, so that a corpus entry always builds the same way) are built as
// a tensor-parallel shard of 2 GPUs and a quarter of 4 (half of those with sequence parallelism): the
// shard's sizes, its AllReduce operators and the split ops' costs; of the others, those of odd length
// (a quarter) as an expert-parallel shard of 2 (the experts' share, its AllToAll operators; a dense
// model's refusal). The token loss takes each of its three forms (?loss=fp32, model, fused) by length
// as well.
#include <map>
#include <string>

#include "trainscope/core/costs.h"
#include "trainscope/core/errors.h"
#include "trainscope/core/model_loader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        static const char* const kGroups[4] = {"1", "1", "2", "4"};
        std::map<std::string, std::string> options{{"tensor_parallel", kGroups[size % 4]}};
        if (size % 4 >= 2 && size % 8 >= 4) options["sequence_parallel"] = "1";
        if (size % 4 == 1) options["expert_parallel"] = "2";
        static const char* const kLosses[3] = {"fp32", "model", "fused"};
        options["loss"] = kLosses[(size / 8) % 3];
        ts::Graph g = ts::importHfConfigText(text, "fuzz-config.json", options);
        ts::computeCosts(g, 2);
    } catch (const ts::ModelError&) {
    }
    return 0;
}
