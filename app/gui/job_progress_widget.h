#pragma once
// The status-bar strip that follows a BackgroundJob: what it is doing, a progress bar (busy when
// the fraction is unknown), the time left, and Cancel. Hidden when no job runs.
#include <QPointer>
#include <QWidget>

class QLabel;
class QProgressBar;
class QPushButton;

namespace ts::gui {

class BackgroundJob;

class JobProgressWidget : public QWidget {
    Q_OBJECT
public:
    explicit JobProgressWidget(QWidget* parent = nullptr);
    void follow(BackgroundJob* job);
    QPushButton* cancelButton() const { return cancel_; }
    QString text() const;  // what the strip says now (tests)

private:
    void update(const QString& stage, double fraction);

    QPointer<BackgroundJob> job_;
    QLabel* label_ = nullptr;
    QProgressBar* bar_ = nullptr;
    QLabel* timeLeft_ = nullptr;
    QPushButton* cancel_ = nullptr;
};

}  // namespace ts::gui
