#pragma once
// Long work off the GUI thread: a function runs on its own thread and reports progress, partial
// results and the end through queued signals, so the window stays responsive. Cancel sets a flag
// the work polls (the profiler and the loaders stop at their next check and keep what they have).
#include <QElapsedTimer>
#include <QObject>
#include <QString>
#include <atomic>
#include <functional>

class QThread;

namespace ts::gui {

class BackgroundJob;

// What the work function sees, on the worker thread.
class JobContext {
public:
    explicit JobContext(BackgroundJob& job) : job_(job) {}
    // Stage text and overall fraction done in [0, 1] (negative: unknown, a busy indicator).
    void progress(const QString& stage, double fraction);
    bool cancelled() const;
    const std::atomic<bool>* cancelFlag() const;
    // Runs `f` on the GUI thread, in order with the progress reports (for partial results).
    void onGuiThread(std::function<void()> f);

private:
    BackgroundJob& job_;
};

class BackgroundJob : public QObject {
    Q_OBJECT
public:
    // `work` throws to report failure; its what() becomes finished()'s error.
    using Work = std::function<void(JobContext&)>;
    BackgroundJob(QString title, Work work, QObject* parent = nullptr);
    ~BackgroundJob() override;  // cancels and waits for the thread

    void start();
    void cancel();
    bool isRunning() const { return running_; }
    bool isCancelled() const { return cancelled_.load(); }
    const QString& title() const { return title_; }
    const QString& stage() const { return stage_; }
    double fraction() const { return fraction_; }
    // Seconds left, extrapolated from the time so far and the fraction done; negative when unknown.
    double secondsLeft() const;

Q_SIGNALS:
    void progressed(const QString& stage, double fraction);
    // error is empty on success; cancelled says whether Cancel ended it.
    void finished(bool cancelled, const QString& error);

private:
    friend class JobContext;
    void report(const QString& stage, double fraction);  // GUI thread

    QString title_;
    Work work_;
    QThread* thread_ = nullptr;
    std::atomic<bool> cancelled_{false};
    bool running_ = false;
    QString stage_;
    double fraction_ = -1;
    QString error_;
    QElapsedTimer clock_;
};

// "about 2 min left", "about 12 s left", "" when unknown.
QString formatTimeLeft(double seconds);

}  // namespace ts::gui
