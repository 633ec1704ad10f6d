#include "model_loading.h"

#include <algorithm>
#include <filesystem>

#include "trainscope/core/errors.h"
#include "trainscope/core/kineto_trace.h"
#include "trainscope/core/model_loader.h"
#include "trainscope/core/profile_file.h"

namespace ts::gui {

using namespace ts::predictors;

namespace {

// The model a profile names: as recorded, else the same file name beside the profile.
std::string profileModelSpec(const Profile& profile, const std::string& profilePath) {
    const std::string& recorded = profile.scenario.model;
    if (recorded.empty()) throw ModelError(profilePath, "the profile does not name its model");
    if (recorded.rfind("zoo:", 0) == 0) return recorded;
    const ModelSpec parsed = parseModelSpec(recorded);
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::exists(parsed.location, ec)) return recorded;
    const fs::path beside = fs::path(profilePath).parent_path() / fs::path(parsed.location).filename();
    if (!fs::exists(beside, ec))
        throw ModelError(profilePath, "its model " + parsed.location +
                                          " is neither where it was recorded nor beside "
                                          "the profile");
    const size_t query = recorded.find('?');
    return beside.string() + (query == std::string::npos ? "" : recorded.substr(query));
}

}  // namespace

LoadedModel loadForExplorer(const std::string& spec, const GpuDatabase& db) {
    LoadedModel m;
    m.spec = spec;
    std::string modelSpec = spec;
    int64_t seq = 0;
    if (isKinetoTraceFile(spec)) {
        m.trace = makeTraceDocument(spec, readKinetoTrace(spec), db);
        return m;
    }
    if (isProfileFile(spec)) {
        m.profile = std::make_unique<Profile>(readProfile(spec));
        modelSpec = profileModelSpec(*m.profile, spec);
        seq = m.profile->scenario.seq;
        m.profilePrecision = parseTrainingPrecision(m.profile->scenario.precision);
        m.profileOptimizer = parseOptimizer(m.profile->scenario.optimizer);
        for (const ProfileRun& run : m.profile->runs)
            if (run.fits && run.complete) m.profileBatch = std::max(m.profileBatch, run.batch);
    }
    m.graph = std::make_unique<Graph>(loadModel(modelSpec));
    m.predictor = std::make_unique<TrainingPredictor>(*m.graph, seq);
    if (m.profile) m.predictor->useProfile(*m.profile, db);
    return m;
}

std::string displayName(const std::string& spec) {
    if (spec.rfind("zoo:", 0) == 0) return spec;
    const std::string path = spec.substr(0, spec.find('?'));
    return std::filesystem::path(path).filename().string();
}

}  // namespace ts::gui
