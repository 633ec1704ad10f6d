#pragma once
// Light and dark palettes. "System" keeps the platform's style and palette; Light and Dark use
// Qt's Fusion style, whose drawing follows the palette everywhere (Qt 6.4 has no colour-scheme
// hint to follow the desktop's dark mode, so the user picks).
#include "app_settings.h"

class QApplication;

namespace ts::gui {

void applyTheme(QApplication& app, Theme theme);

// Whether the application's palette is dark (plots pick their colours from it).
bool darkPalette();

}  // namespace ts::gui
