#pragma once
// Choosing and writing a hardware-choice report in one step, for the GUI's File > Export Report…
// and for the GUI's fallback where there is no display. Exceptions become a sentence.
#include <QString>
#include <string>
#include <vector>

#include "report_writer.h"
#include "trainscope/core/gpu_database.h"
#include "trainscope/predictors/choice/hardware_choice.h"

class QWidget;

namespace ts::report {

struct ReportRequest {
    const predictors::TrainingPredictor* predictor = nullptr;  // null: no model is open
    std::vector<const GpuSpec*> gpus;
    predictors::TrainingScenario base;  // optimizer, data parallelism, checkpointing
    predictors::TrainingGoal goal;
    predictors::HardwareChoiceOptions options;  // automatic batch, every precision unless set
};

// Every GPU of `db`, the batch chosen per GPU, every precision.
ReportRequest requestFor(const predictors::TrainingPredictor* predictor, const GpuDatabase& db,
                         const predictors::TrainingScenario& base, const predictors::TrainingGoal& goal,
                         const std::string& modelLabel);

// Empty on success, otherwise a sentence saying what went wrong.
QString exportReport(const ReportRequest& request, ReportFormat format, const QString& path);

// trainscope-report-<model>.<format>, the model reduced to its file or zoo name.
QString defaultReportFileName(const std::string& modelLabel, ReportFormat format);

// Asks for the file to write (its suffix chooses the format; none: HTML). False when cancelled.
bool askReportPath(QWidget* parent, const std::string& modelLabel, QString& path, ReportFormat& format);

}  // namespace ts::report
