#pragma once
// Tools > Prices: every GPU's price per GPU-hour as the costs use it, and the user's own price,
// written to the user GPU file (docs/gpu-database.md) where it replaces the listed ones.
#include <QDialog>
#include <map>
#include <string>

class QDoubleSpinBox;
class QTableWidget;

namespace ts::gui {

class ExplorerState;

class PricesDialog : public QDialog {
    Q_OBJECT
public:
    // `userFile`: the file written on Save (the one GpuDatabase::load() reads first).
    PricesDialog(ExplorerState& state, QString userFile, QWidget* parent = nullptr);

    QTableWidget* table() const { return table_; }
    // The user's price for a GPU (0: none, the listed prices apply).
    QDoubleSpinBox* ownPrice(const std::string& gpuId) const;
    // Writes the prices that changed and reloads them; false, with the problem shown, when the
    // file could not be written.
    bool save();

private:
    ExplorerState& state_;
    QString userFile_;
    QTableWidget* table_ = nullptr;
    std::map<std::string, QDoubleSpinBox*> boxes_;
    std::map<std::string, double> initial_;
};

// Tools > Prices: the dialog on the user GPU file, or a message saying why there is none.
void showPricesDialog(ExplorerState& state, QWidget* parent);

}  // namespace ts::gui
