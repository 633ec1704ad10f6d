#include "background_job.h"

#include <QMetaObject>
#include <QThread>
#include <cmath>

namespace ts::gui {

void JobContext::progress(const QString& stage, double fraction) {
    BackgroundJob* job = &job_;
    QMetaObject::invokeMethod(
        job, [job, stage, fraction] { job->report(stage, fraction); }, Qt::QueuedConnection);
}

bool JobContext::cancelled() const {
    return job_.cancelled_.load();
}

const std::atomic<bool>* JobContext::cancelFlag() const {
    return &job_.cancelled_;
}

void JobContext::onGuiThread(std::function<void()> f) {
    QMetaObject::invokeMethod(&job_, std::move(f), Qt::QueuedConnection);
}

BackgroundJob::BackgroundJob(QString title, Work work, QObject* parent)
    : QObject(parent), title_(std::move(title)), work_(std::move(work)) {}

BackgroundJob::~BackgroundJob() {
    if (thread_) {
        cancel();
        thread_->wait();
        delete thread_;
    }
}

void BackgroundJob::start() {
    if (running_ || thread_) return;
    running_ = true;
    clock_.start();
    thread_ = QThread::create([this] {
        JobContext context(*this);
        try {
            work_(context);
        } catch (const std::exception& e) {
            error_ = QString::fromUtf8(e.what());  // read only after the thread has finished
        } catch (...) {
            error_ = tr("an unexpected error stopped the job");
        }
    });
    // Queued to this object's (the GUI) thread, after every report the work posted.
    connect(thread_, &QThread::finished, this, [this] {
        running_ = false;
        Q_EMIT finished(cancelled_.load(), error_);
    });
    thread_->start();
}

void BackgroundJob::cancel() {
    cancelled_.store(true);
}

void BackgroundJob::report(const QString& stage, double fraction) {
    stage_ = stage;
    fraction_ = fraction;
    Q_EMIT progressed(stage, fraction);
}

double BackgroundJob::secondsLeft() const {
    if (!running_ || fraction_ <= 0.02 || fraction_ > 1) return -1;  // too early to extrapolate
    const double elapsed = double(clock_.elapsed()) / 1000.0;
    return elapsed * (1 - fraction_) / fraction_;
}

QString formatTimeLeft(double seconds) {
    if (seconds < 0 || !std::isfinite(seconds)) return {};
    if (seconds < 60) return QObject::tr("about %1 s left").arg(std::max(1, int(std::lround(seconds))));
    if (seconds < 3600) return QObject::tr("about %1 min left").arg(int(std::lround(seconds / 60)));
    return QObject::tr("about %1 h left").arg(seconds / 3600, 0, 'f', 1);
}

}  // namespace ts::gui
