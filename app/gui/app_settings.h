#pragma once
// What the explorer remembers between sessions, through QSettings (on Linux an INI file under
// ~/.config/TrainScope/, which Qt rewrites atomically through QSaveFile): the controls' settings,
// the optimizer and training goal chosen per kind of model, recent files, the colour theme and the
// window's geometry.
#include <QByteArray>
#include <QSettings>
#include <QStringList>
#include <optional>

#include "explorer_state.h"

namespace ts::gui {

enum class Theme { System, Light, Dark };
// "system", "light", "dark" (the settings file and --theme use them); nullopt for anything else.
std::optional<Theme> parseTheme(const QString& name);
QString themeName(Theme t);

class AppSettings {
public:
    AppSettings();                                 // the application's settings file
    explicit AppSettings(const QString& iniFile);  // a given file (tests)

    // Batch, precision, GPU, GPU count, interconnect, checkpointing; the optimizer and the sequence
    // length belong to the model (its kind's choice, its own length) and are not read or written.
    ExplorerSettings explorer(const ExplorerSettings& defaults) const;
    void setExplorer(const ExplorerSettings& s);
    ModelChoices modelChoices() const;
    void setModelChoices(const ModelChoices& c);

    // Most recent first, at most kMaxRecent; entries that no longer exist are kept (a network
    // drive may be away) until opening them fails.
    static constexpr int kMaxRecent = 10;
    QStringList recentFiles() const;
    void addRecentFile(const QString& spec);
    void removeRecentFile(const QString& spec);

    Theme theme() const;
    void setTheme(Theme t);
    QByteArray windowGeometry() const;
    void setWindowGeometry(const QByteArray& g);
    QByteArray windowState() const;
    void setWindowState(const QByteArray& s);

    // Writes pending changes now; false (with QSettings' status) when the file cannot be written.
    bool sync();

private:
    mutable QSettings settings_;
};

}  // namespace ts::gui
