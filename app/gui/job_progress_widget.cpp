#include "job_progress_widget.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <algorithm>
#include <cmath>

#include "background_job.h"

namespace ts::gui {

JobProgressWidget::JobProgressWidget(QWidget* parent) : QWidget(parent) {
    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    label_ = new QLabel(this);
    bar_ = new QProgressBar(this);
    bar_->setMaximumWidth(200);
    bar_->setRange(0, 1000);
    bar_->setTextVisible(false);
    timeLeft_ = new QLabel(this);
    cancel_ = new QPushButton(tr("Cancel"), this);
    cancel_->setToolTip(tr("Stop the job; what it has measured so far is kept"));
    layout->addWidget(label_);
    layout->addWidget(bar_);
    layout->addWidget(timeLeft_);
    layout->addWidget(cancel_);
    connect(cancel_, &QPushButton::clicked, this, [this] {
        if (!job_) return;
        job_->cancel();
        cancel_->setEnabled(false);
        label_->setText(tr("%1: cancelling…").arg(job_->title()));
    });
    hide();
}

void JobProgressWidget::follow(BackgroundJob* job) {
    job_ = job;
    cancel_->setEnabled(true);
    update(tr("starting"), -1);
    connect(job, &BackgroundJob::progressed, this, &JobProgressWidget::update);
    connect(job, &BackgroundJob::finished, this, [this] { hide(); });
    show();
}

void JobProgressWidget::update(const QString& stage, double fraction) {
    if (!job_) return;
    label_->setText(job_->title() + ": " + stage);
    if (fraction < 0) {
        bar_->setRange(0, 0);  // busy indicator
    } else {
        bar_->setRange(0, 1000);
        bar_->setValue(int(std::lround(1000 * std::clamp(fraction, 0.0, 1.0))));
    }
    timeLeft_->setText(formatTimeLeft(job_->secondsLeft()));
}

QString JobProgressWidget::text() const {
    return label_->text() + " " + timeLeft_->text();
}

}  // namespace ts::gui
