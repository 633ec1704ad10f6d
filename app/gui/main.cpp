// The TrainScope GUI (the explorer issue builds it out). For now: a window that says what it is.
#include <QApplication>
#include <QLabel>

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QLabel label("TrainScope");
    label.show();
    return app.exec();
}
