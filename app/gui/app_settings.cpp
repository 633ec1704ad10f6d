#include "app_settings.h"

#include <algorithm>

namespace ts::gui {

using namespace ts::predictors;

AppSettings::AppSettings() : settings_(QSettings::IniFormat, QSettings::UserScope, "TrainScope", "TrainScope") {
    // Qt's default, stated: the file is rewritten through QSaveFile (temporary file, then rename),
    // so a crash or a full disk never leaves half a settings file.
    settings_.setAtomicSyncRequired(true);
}

AppSettings::AppSettings(const QString& iniFile) : settings_(iniFile, QSettings::IniFormat) {
    settings_.setAtomicSyncRequired(true);
}

ExplorerSettings AppSettings::explorer(const ExplorerSettings& defaults) const {
    ExplorerSettings s = defaults;
    settings_.beginGroup("explorer");
    s.batch = settings_.value("batch", qlonglong(s.batch)).toLongLong();
    // Names, not enum values, so that a reordered enum never misreads an old file.
    if (auto p = parseTrainingPrecision(settings_.value("precision").toString().toStdString())) s.precision = *p;
    s.gpuId = settings_.value("gpu", QString::fromStdString(s.gpuId)).toString().toStdString();
    s.gpus = std::max(1, settings_.value("gpus", s.gpus).toInt());
    if (auto i = parseInterconnect(settings_.value("interconnect").toString().toStdString())) s.interconnect = *i;
    s.zeroStage = std::clamp(settings_.value("zero_stage", s.zeroStage).toInt(), 0, 3);
    s.accumulation = std::clamp<qlonglong>(settings_.value("accumulation", qlonglong(s.accumulation)).toLongLong(), 1, 1024);
    s.channelsLast = settings_.value("channels_last", s.channelsLast).toBool();
    s.masterWeights = settings_.value("master_weights", s.masterWeights).toBool();
    if (auto i = parseOptimizerImplementation(settings_.value("optimizer_implementation").toString().toStdString()))
        s.optimizerImplementation = *i;
    // A policy's name; an older file's true (checkpointing on) reads as every block.
    const QString ckpt = settings_.value("checkpointing").toString();
    if (auto c = parseCheckpointing(ckpt.toStdString()))
        s.checkpointing = *c;
    else if (ckpt == "true")
        s.checkpointing = Checkpointing::Blocks;
    settings_.endGroup();
    return s;
}

void AppSettings::setExplorer(const ExplorerSettings& s) {
    settings_.beginGroup("explorer");
    settings_.setValue("batch", qlonglong(s.batch));
    settings_.setValue("precision", trainingPrecisionName(s.precision));
    settings_.setValue("gpu", QString::fromStdString(s.gpuId));
    settings_.setValue("gpus", s.gpus);
    settings_.setValue("interconnect", interconnectName(s.interconnect));
    settings_.setValue("checkpointing", checkpointingName(s.checkpointing));
    settings_.setValue("zero_stage", s.zeroStage);
    settings_.setValue("accumulation", qlonglong(s.accumulation));
    settings_.setValue("channels_last", s.channelsLast);
    settings_.setValue("master_weights", s.masterWeights);
    settings_.setValue("optimizer_implementation", optimizerImplementationName(s.optimizerImplementation));
    settings_.endGroup();
}

namespace {
constexpr ModelKind kKinds[] = {ModelKind::Language, ModelKind::Vision, ModelKind::Other};
}

ModelChoices AppSettings::modelChoices() const {
    ModelChoices c;
    for (ModelKind kind : kKinds) {
        // Names, not enum values, so that a reordered enum never misreads an old file.
        settings_.beginGroup(QString("kinds/") + modelKindName(kind));
        const size_t k = size_t(kind);
        if (auto o = parseOptimizer(settings_.value("optimizer").toString().toStdString())) c.optimizer[k] = *o;
        if (auto p = parseTrainingPrecision(settings_.value("precision").toString().toStdString()))
            c.precision[k] = *p;
        if (const qlonglong batch = settings_.value("batch", 0).toLongLong(); batch >= 1) c.batch[k] = int64_t(batch);
        TrainingGoal g;
        const double epochs = settings_.value("goalEpochs", 0.0).toDouble();
        const double samples = settings_.value("goalSamples", 0.0).toDouble();
        const double tokens = settings_.value("goalTokens", 0.0).toDouble();
        if (tokens > 0) {
            g.tokens = tokens;
            c.goal[k] = g;
        } else if (epochs > 0 && samples > 0) {
            g.epochs = epochs;
            g.datasetSamples = samples;
            c.goal[k] = g;
        }
        settings_.endGroup();
    }
    return c;
}

void AppSettings::setModelChoices(const ModelChoices& c) {
    for (ModelKind kind : kKinds) {
        settings_.beginGroup(QString("kinds/") + modelKindName(kind));
        settings_.remove("");  // this kind's keys: a choice undone is not kept
        const size_t k = size_t(kind);
        if (c.optimizer[k]) settings_.setValue("optimizer", optimizerName(*c.optimizer[k]));
        if (c.precision[k]) settings_.setValue("precision", trainingPrecisionName(*c.precision[k]));
        if (c.batch[k]) settings_.setValue("batch", qlonglong(*c.batch[k]));
        if (const auto& g = c.goal[k]) {
            if (g->inTokens()) {
                settings_.setValue("goalTokens", g->tokens);
            } else {
                settings_.setValue("goalEpochs", g->epochs);
                settings_.setValue("goalSamples", g->datasetSamples);
            }
        }
        settings_.endGroup();
    }
}

QStringList AppSettings::recentFiles() const {
    QStringList files = settings_.value("recentFiles").toStringList();
    files.removeAll(QString());
    while (files.size() > kMaxRecent) files.removeLast();
    return files;
}

void AppSettings::addRecentFile(const QString& spec) {
    QStringList files = recentFiles();
    files.removeAll(spec);
    files.prepend(spec);
    while (files.size() > kMaxRecent) files.removeLast();
    settings_.setValue("recentFiles", files);
}

void AppSettings::removeRecentFile(const QString& spec) {
    QStringList files = recentFiles();
    files.removeAll(spec);
    settings_.setValue("recentFiles", files);
}

std::optional<Theme> parseTheme(const QString& name) {
    if (name == "system") return Theme::System;
    if (name == "light") return Theme::Light;
    if (name == "dark") return Theme::Dark;
    return std::nullopt;
}

QString themeName(Theme t) {
    return t == Theme::Light ? "light" : t == Theme::Dark ? "dark" : "system";
}

Theme AppSettings::theme() const {
    return parseTheme(settings_.value("theme").toString()).value_or(Theme::System);
}

void AppSettings::setTheme(Theme t) {
    settings_.setValue("theme", themeName(t));
}

QByteArray AppSettings::windowGeometry() const {
    return settings_.value("window/geometry").toByteArray();
}

void AppSettings::setWindowGeometry(const QByteArray& g) {
    settings_.setValue("window/geometry", g);
}

QByteArray AppSettings::windowState() const {
    return settings_.value("window/state").toByteArray();
}

void AppSettings::setWindowState(const QByteArray& s) {
    settings_.setValue("window/state", s);
}

bool AppSettings::sync() {
    settings_.sync();
    return settings_.status() == QSettings::NoError;
}

}  // namespace ts::gui
