#include "prices_dialog.h"

#include <QDate>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QTableWidget>
#include <QVBoxLayout>

#include "explorer_state.h"
#include "trainscope/core/gpu_user_file.h"

namespace ts::gui {

namespace {

enum Column { Gpu, Used, Own, Basis, ColumnCount };  // the editable column before the long one

QString basisOf(const Price& p) {
    QString s = QString::fromStdString(p.provider + (p.instance.empty() ? "" : " " + p.instance));
    if (p.amortised) s = QObject::tr("amortised purchase (%1)").arg(QString::fromStdString(p.instance));
    return s + QString(", %1").arg(QString::fromStdString(p.date));
}

}  // namespace

PricesDialog::PricesDialog(ExplorerState& state, QString userFile, QWidget* parent)
    : QDialog(parent), state_(state), userFile_(std::move(userFile)) {
    setWindowTitle(tr("Prices per GPU-hour"));
    const GpuDatabase& db = state_.database();
    auto* intro = new QLabel(
        tr("The costs use each GPU's cheapest on-demand price of the GPU database's snapshot of %1, or where no "
           "cloud lists it, its purchase price amortised (docs/gpu-database.md). A price of your own replaces them "
           "for that GPU; it is written to %2. 0 removes it.")
            .arg(QString::fromStdString(db.priceSnapshot().date), userFile_.toHtmlEscaped()),
        this);
    intro->setWordWrap(true);
    table_ = new QTableWidget(int(db.gpus().size()), ColumnCount, this);
    table_->setHorizontalHeaderLabels({tr("GPU"), tr("$/GPU-hour used"), tr("your $/GPU-hour"), tr("from")});
    table_->setTextElideMode(Qt::ElideRight);
    table_->setWordWrap(false);
    table_->verticalHeader()->hide();
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    for (int row = 0; row < int(db.gpus().size()); ++row) {
        const GpuSpec& g = db.gpus()[size_t(row)];
        const Price* p = g.cheapestPrice();
        const bool own = p && p->source == kUserPriceSource;
        table_->setItem(row, Gpu, new QTableWidgetItem(QString::fromStdString(g.name)));
        table_->setItem(row, Used, new QTableWidgetItem(p ? QString::number(p->usdPerGpuHour, 'f', 3) : tr("none")));
        auto* basis = new QTableWidgetItem(p ? basisOf(*p) : QString::fromStdString(g.pricesNote));
        basis->setToolTip(basis->text());
        table_->setItem(row, Basis, basis);
        auto* box = new QDoubleSpinBox(table_);
        box->setRange(0, 1000);
        box->setDecimals(3);
        box->setSpecialValueText(tr("none"));
        box->setValue(own ? p->usdPerGpuHour : 0);
        table_->setCellWidget(row, Own, box);
        boxes_[g.id] = box;
        initial_[g.id] = box->value();
    }
    table_->resizeColumnsToContents();
    table_->horizontalHeader()->setStretchLastSection(true);
    table_->setColumnWidth(Basis, 360);  // elided; the whole text is in the tooltip
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel, this);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        if (save()) accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addWidget(table_);
    layout->addWidget(buttons);
    resize(900, 600);
}

QDoubleSpinBox* PricesDialog::ownPrice(const std::string& gpuId) const {
    auto it = boxes_.find(gpuId);
    return it == boxes_.end() ? nullptr : it->second;
}

bool PricesDialog::save() {
    const std::string today = QDate::currentDate().toString(Qt::ISODate).toStdString();
    try {
        for (const auto& [id, box] : boxes_) {
            if (box->value() == initial_[id]) continue;
            setUserPrice(userFile_.toStdString(), id, box->value() > 0 ? std::optional<double>(box->value()) : std::nullopt,
                         today);
            initial_[id] = box->value();
        }
    } catch (const std::exception& e) {
        QMessageBox::warning(this, tr("Prices not saved"), QString::fromUtf8(e.what()));
        state_.reloadPrices();  // those written before the failure
        return false;
    }
    state_.reloadPrices();
    return true;
}

void showPricesDialog(ExplorerState& state, QWidget* parent) {
    const std::string userFile = userGpuFilePath();
    if (userFile.empty()) {
        QMessageBox::warning(parent, QObject::tr("Prices"),
                             QObject::tr("Neither XDG_CONFIG_HOME nor HOME is set: there is no user GPU file to "
                                         "write prices to."));
        return;
    }
    PricesDialog dialog(state, QString::fromStdString(userFile), parent);
    dialog.exec();
}

}  // namespace ts::gui
