#pragma once
// The open trace predicted again at the batch size and precision the controls ask for, where its
// recorded shapes allow (predictors/trace/trace_change.h): a background job per change, on every
// GPU of the database, its results reaching the GPUs view as each GPU is ready; a newer change
// cancels the job of an older one. The trace's own batch and precision need no job: the
// predictions made while it opened are at them.
#include <QObject>
#include <optional>
#include <string>

#include "trainscope/predictors/trace/trace_change.h"

namespace ts::gui {

class BackgroundJob;
class ExplorerState;
struct ExplorerSettings;
struct TraceDocument;

// The change the settings ask of `doc`: its batch where it differs from the recorded one (found
// in the shapes), its precision where it differs from the recorded one. Nullopt with `why` set for
// a precision a trace cannot take (fp8).
std::optional<predictors::TraceChange> traceChangeFor(const TraceDocument& doc, const ExplorerSettings& settings,
                                                      std::string* why = nullptr);

class TraceRepredictor : public QObject {
    Q_OBJECT
public:
    explicit TraceRepredictor(ExplorerState& state, QObject* parent = nullptr);
    ~TraceRepredictor() override;
    bool busy() const { return job_ != nullptr; }

private:
    void follow();  // on ExplorerState::changed

    ExplorerState& state_;
    BackgroundJob* job_ = nullptr;
    const TraceDocument* jobDoc_ = nullptr;
    predictors::TraceChange jobChange_;
};

}  // namespace ts::gui
