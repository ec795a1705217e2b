// The Motiond QML module against a real motiond replaying the bundled recording
// (one finger dragging the card up and down, looped) with config/motiond.toml's scene,
// and against fake ones (FakeMotiondTest) for what a real motiond never does: lines too
// long or not JSON, a hello and a hang-up, an older motiond without optional subscriptions.
// The module is loaded as an application loads it, by `import Motiond` from the build's
// import path; the test reaches its objects through properties, signals and invokables.
//
// MOTIOND names the daemon (default: the repository's .build/debug/motiond). Every wait
// has a deadline; run offscreen (QT_QPA_PLATFORM=offscreen), as clients/qt/test.sh does.
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocalServer>
#include <QLocalSocket>
#include <QPointF>
#include <QProcess>
#include <QQmlComponent>
#include <QQmlEngine>
#include <QQuickItem>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>

namespace {

const QString repository = QStringLiteral(MOTIOND_REPOSITORY);
const int deadline = 10000;   // ms: any one wait below

QString motiondPath()
{
    const QString fromEnvironment = qEnvironmentVariable("MOTIOND");
    return fromEnvironment.isEmpty() ? repository + QStringLiteral("/.build/debug/motiond") : fromEnvironment;
}

/// The scene the test loads: a connection, an Item the size of the card, and its binding.
QByteArray scene(const QString &socketPath, const QString &extraConnection = {})
{
    return QStringLiteral(R"(
import QtQuick
import Motiond
Item {
    width: 1920; height: 1080
    MotiondConnection {
        id: motiond
        objectName: "connection"
        socketPath: "%1"
        firstRetry: 50
        maxRetry: 400
        %2
    }
    Item { id: card; objectName: "card"; width: 520; height: 360 }
    MotiondBinding { objectName: "binding"; connection: motiond; element: "card"; target: card }
    Item { id: photo; objectName: "photo"; width: 640; height: 420 }
    MotiondBinding { connection: motiond; element: "photo"; target: photo }
}
)").arg(socketPath, extraConnection).toUtf8();
}

QPointF point(const QVariant &value)
{
    const QVariantMap map = value.toMap();
    return QPointF(map.value(QStringLiteral("x")).toDouble(), map.value(QStringLiteral("y")).toDouble());
}

} // namespace

class MotiondModuleTest : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void theBoundItemMovesAsCardPositionDoes();
    void everyErrorReplyReachesTheErrorSignal();
    void aWrongTokenIsAnError();
    void getRepliesWithTheValue();
    void thePhotoIsTurnedInDegreesAndScaled();
    void theBindingResumesAfterMotiondRestarts();
    void anElementMotiondKeptIsNoErrorAfterARestart();
    void theBindingDrawsThePredictedPosition();
    void theKioskExampleMovesItsCard();
    void aBindingFollowsAnElementAddedAfterIt();

private:
    bool startMotiond(const QString &config, const QStringList &extra = {});
    void stopMotiond();
    QObject *load(const QByteArray &qml);
    /// Waits for the binding to move the card, then checks the card's top-left is the
    /// latest card.position less half the card's size; returns that centre.
    QPointF nextMove(const char *positionStream = "card.position");

    QTemporaryDir m_directory;
    QString m_socketPath;
    QProcess m_motiond;
    QQmlEngine *m_engine = nullptr;
    QObject *m_root = nullptr;
    QObject *m_connection = nullptr;
    QObject *m_binding = nullptr;
    QQuickItem *m_card = nullptr;
    QScopedPointer<QSignalSpy> m_values;
    /// The latest value the connection reported of `stream`.
    QVariant latest(const QString &stream) const;
};

void MotiondModuleTest::initTestCase()
{
    QVERIFY2(QFileInfo(motiondPath()).isExecutable(),
             qPrintable(QStringLiteral("no motiond at %1: build it, or set MOTIOND").arg(motiondPath())));
    QVERIFY(m_directory.isValid());
    m_socketPath = m_directory.filePath(QStringLiteral("motiond.sock"));
}

void MotiondModuleTest::init()
{
    QVERIFY(startMotiond(repository + QStringLiteral("/config/motiond.toml")));
    m_engine = new QQmlEngine;
    m_engine->addImportPath(QStringLiteral(MOTIOND_IMPORT_PATH));
}

void MotiondModuleTest::cleanup()
{
    m_values.reset();
    delete m_root;
    m_root = nullptr;
    delete m_engine;
    m_engine = nullptr;
    m_values.reset();
    stopMotiond();
}

bool MotiondModuleTest::startMotiond(const QString &config, const QStringList &extra)
{
    m_motiond.setProgram(motiondPath());
    m_motiond.setArguments(QStringList{QStringLiteral("--replay"), repository + QStringLiteral("/data/recordings/atmel-maxtouch-drag-up-down.evemu"),
                                       QStringLiteral("--loop"), QStringLiteral("--config"), config,
                                       QStringLiteral("--socket"), m_socketPath} + extra);
    m_motiond.setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_motiond.start();
    if (!m_motiond.waitForStarted(deadline))
        return false;
    QElapsedTimer waited;
    waited.start();
    while (!QFileInfo::exists(m_socketPath)) {
        if (waited.elapsed() > deadline || m_motiond.state() != QProcess::Running) {
            qWarning("motiond made no socket at %s within %d ms", qPrintable(m_socketPath), deadline);
            return false;
        }
        QTest::qWait(10);
    }
    return true;
}

void MotiondModuleTest::stopMotiond()
{
    if (m_motiond.state() == QProcess::NotRunning)
        return;
    m_motiond.terminate();   // SIGTERM: motiond says bye to its clients and removes its socket
    if (!m_motiond.waitForFinished(deadline)) {
        m_motiond.kill();
        m_motiond.waitForFinished(deadline);
    }
}

QObject *MotiondModuleTest::load(const QByteArray &qml)
{
    QQmlComponent component(m_engine);
    component.setData(qml, QUrl(QStringLiteral("file:///tst_motiond/scene.qml")));
    m_root = component.create();
    if (!m_root) {
        qWarning("%s", qPrintable(component.errorString()));
        return nullptr;
    }
    m_connection = m_root->findChild<QObject *>(QStringLiteral("connection"));
    m_binding = m_root->findChild<QObject *>(QStringLiteral("binding"));
    m_card = m_root->findChild<QQuickItem *>(QStringLiteral("card"));
    // Every value the connection reports, in order: what the card must show.
    m_values.reset(new QSignalSpy(m_connection, SIGNAL(value(QString,QVariant,double))));
    return m_root;
}

QVariant MotiondModuleTest::latest(const QString &stream) const
{
    for (qsizetype index = m_values->size() - 1; index >= 0; --index) {
        if (m_values->at(index).at(0).toString() == stream)
            return m_values->at(index).at(1);
    }
    return {};
}

QPointF MotiondModuleTest::nextMove(const char *positionStream)
{
    QSignalSpy applied(m_binding, SIGNAL(applied()));
    if (!applied.wait(deadline)) {
        QTest::qFail("the binding moved nothing within the deadline", __FILE__, __LINE__);
        return {};
    }
    const QPointF centre = point(latest(QLatin1String(positionStream)));
    if (m_card->x() != centre.x() - m_card->width() / 2 || m_card->y() != centre.y() - m_card->height() / 2) {
        QTest::qFail(qPrintable(QStringLiteral("the card is at (%1, %2), %3 says its centre is (%4, %5)")
                                    .arg(m_card->x()).arg(m_card->y()).arg(QLatin1String(positionStream))
                                    .arg(centre.x()).arg(centre.y())),
                     __FILE__, __LINE__);
    }
    return centre;
}


void MotiondModuleTest::theBoundItemMovesAsCardPositionDoes()
{
    QVERIFY(load(scene(m_socketPath)));
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    // The recording drags the card up and down: its y changes, its x stays.
    QSet<int> heights;
    for (int move = 0; move < 40; ++move) {
        const QPointF centre = nextMove();
        if (QTest::currentTestFailed())
            return;
        QVERIFY2(centre.x() > 0 && centre.x() < 1920 && centre.y() > 0 && centre.y() < 1080,
                 "card.position is the centre in screen pixels");
        heights.insert(qRound(centre.y()));
    }
    QVERIFY2(heights.size() >= 10, qPrintable(QStringLiteral("the card took %1 heights in 40 moves").arg(heights.size())));
    QCOMPARE(m_card->rotation(), 0.0);
    QCOMPARE(m_card->scale(), 1.0);
}

void MotiondModuleTest::everyErrorReplyReachesTheErrorSignal()
{
    QVERIFY(load(scene(m_socketPath)));
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    QSignalSpy errors(m_connection, SIGNAL(error(QString,QString,QString)));
    int id = 0;
    const QVariantMap somewhere{{QStringLiteral("x"), 1}, {QStringLiteral("y"), 2}};
    QVERIFY(QMetaObject::invokeMethod(m_connection, "set", Q_RETURN_ARG(int, id),
                                      Q_ARG(QString, QStringLiteral("nothing.position")), Q_ARG(QVariant, somewhere)));
    QVERIFY(QMetaObject::invokeMethod(m_connection, "set", Q_RETURN_ARG(int, id),
                                      Q_ARG(QString, QStringLiteral("card.state")), Q_ARG(QVariant, QStringLiteral("active"))));
    QVERIFY(QMetaObject::invokeMethod(m_connection, "request", Q_RETURN_ARG(int, id),
                                      Q_ARG(QString, QStringLiteral("frobnicate")), Q_ARG(QVariantMap, {})));
    QVERIFY(QMetaObject::invokeMethod(m_connection, "removeElement", Q_RETURN_ARG(int, id),
                                      Q_ARG(QString, QStringLiteral("nothing"))));
    QTRY_COMPARE_WITH_TIMEOUT(errors.size(), 4, deadline);
    const QList<QStringList> expected = {
        {QStringLiteral("unknown_stream"), QStringLiteral("set")},
        {QStringLiteral("not_writable"), QStringLiteral("set")},
        {QStringLiteral("unknown_op"), QStringLiteral("frobnicate")},
        {QStringLiteral("unknown_element"), QStringLiteral("remove_element")},
    };
    for (int index = 0; index < 4; ++index) {
        QCOMPARE(errors.at(index).at(0).toString(), expected[index][0]);
        QVERIFY2(!errors.at(index).at(1).toString().isEmpty(), "the error carries motiond's message");
        QCOMPARE(errors.at(index).at(2).toString(), expected[index][1]);
    }
}

void MotiondModuleTest::aWrongTokenIsAnError()
{
    // This motiond has no control token file: any token is refused, and the refusal told.
    QVERIFY(load(scene(m_socketPath, QStringLiteral("token: \"not the token\""))));
    QSignalSpy errors(m_connection, SIGNAL(error(QString,QString,QString)));
    QVERIFY(errors.wait(deadline));
    QCOMPARE(errors.at(0).at(0).toString(), QStringLiteral("forbidden"));
    QCOMPARE(errors.at(0).at(2).toString(), QStringLiteral("auth"));
}

void MotiondModuleTest::getRepliesWithTheValue()
{
    QVERIFY(load(scene(m_socketPath)));
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    QSignalSpy replies(m_connection, SIGNAL(replied(int,QString,QVariant)));
    int id = 0;
    QVERIFY(QMetaObject::invokeMethod(m_connection, "get", Q_RETURN_ARG(int, id), Q_ARG(QString, QStringLiteral("card.size"))));
    QTRY_VERIFY_WITH_TIMEOUT(std::any_of(replies.cbegin(), replies.cend(), [id](const QList<QVariant> &reply) { return reply.at(0).toInt() == id; }), deadline);
    for (const QList<QVariant> &reply : std::as_const(replies)) {
        if (reply.at(0).toInt() != id)
            continue;
        QCOMPARE(reply.at(1).toString(), QStringLiteral("get"));
        const QVariantMap size = reply.at(2).toMap().value(QStringLiteral("value")).toMap();
        QCOMPARE(size.value(QStringLiteral("width")).toDouble(), 520.0);
        QCOMPARE(size.value(QStringLiteral("height")).toDouble(), 360.0);
    }
}

void MotiondModuleTest::thePhotoIsTurnedInDegreesAndScaled()
{
    // config/motiond.toml: the photo's centre (1400, 300), 640 by 420, turned 0.1 rad.
    QVERIFY(load(scene(m_socketPath)));
    auto *photo = m_root->findChild<QQuickItem *>(QStringLiteral("photo"));
    QTRY_COMPARE_WITH_TIMEOUT(photo->x(), 1400.0 - 320, deadline);
    QCOMPARE(photo->y(), 300.0 - 210);
    QVERIFY2(qAbs(photo->rotation() - 0.1 * 180 / M_PI) < 1e-9, qPrintable(QString::number(photo->rotation())));
    QCOMPARE(photo->scale(), 1.0);
    // The test runs as root, whom motiond lets set values.
    int id = 0;
    QVERIFY(QMetaObject::invokeMethod(m_connection, "set", Q_RETURN_ARG(int, id),
                                      Q_ARG(QString, QStringLiteral("photo.scale")), Q_ARG(QVariant, 1.5)));
    QTRY_COMPARE_WITH_TIMEOUT(photo->scale(), 1.5, deadline);
    QCOMPARE(photo->x(), 1400.0 - 320);   // x and y are the unscaled item's: it scales about its centre
}

void MotiondModuleTest::theBindingResumesAfterMotiondRestarts()
{
    QVERIFY(load(scene(m_socketPath)));
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    nextMove();
    if (QTest::currentTestFailed())
        return;
    stopMotiond();
    QTRY_VERIFY_WITH_TIMEOUT(!m_connection->property("connected").toBool(), deadline);
    QVERIFY(startMotiond(repository + QStringLiteral("/config/motiond.toml")));
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    m_values->clear();
    QSet<int> heights;
    for (int move = 0; move < 20; ++move) {
        heights.insert(qRound(nextMove().y()));
        if (QTest::currentTestFailed())
            return;
    }
    QVERIFY2(heights.size() >= 5, "the card moves again after motiond restarted");
}

void MotiondModuleTest::anElementMotiondKeptIsNoErrorAfterARestart()
{
    stopMotiond();
    const QStringList state{QStringLiteral("--state"), m_directory.filePath(QStringLiteral("scene.json"))};
    QVERIFY(startMotiond(repository + QStringLiteral("/config/motiond.toml"), state));
    QVERIFY(load(scene(m_socketPath)));
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    QSignalSpy errors(m_connection, SIGNAL(error(QString,QString,QString)));
    QSignalSpy replies(m_connection, SIGNAL(replied(int,QString,QVariant)));
    int id = 0;
    const QVariantMap note{{QStringLiteral("id"), QStringLiteral("note")}, {QStringLiteral("center"), QVariantList{100, 100}},
                           {QStringLiteral("size"), QVariantList{50, 50}}};
    QVERIFY(QMetaObject::invokeMethod(m_connection, "addElement", Q_RETURN_ARG(int, id), Q_ARG(QVariantMap, note)));
    // By id: the bindings' subscribes may be answered after the hello, in this spy too.
    QTRY_VERIFY_WITH_TIMEOUT(std::any_of(replies.cbegin(), replies.cend(), [id](const QList<QVariant> &reply) { return reply.at(0).toInt() == id; }), deadline);
    stopMotiond();
    QTRY_VERIFY_WITH_TIMEOUT(!m_connection->property("connected").toBool(), deadline);
    QVERIFY(startMotiond(repository + QStringLiteral("/config/motiond.toml"), state));
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    // The binding's values come after the re-add's reply: motiond answers in order.
    m_values->clear();
    nextMove();
    QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().at(0).toString() + QStringLiteral(": ") + errors.first().at(1).toString()));
    QVERIFY(QMetaObject::invokeMethod(m_connection, "get", Q_RETURN_ARG(int, id), Q_ARG(QString, QStringLiteral("note.position"))));
    QTRY_VERIFY_WITH_TIMEOUT(replies.size() >= 2 && replies.last().at(0).toInt() == id, deadline);
    QCOMPARE(replies.last().at(2).toMap().value(QStringLiteral("value")).toMap().value(QStringLiteral("x")).toDouble(), 100.0);
}

void MotiondModuleTest::theBindingDrawsThePredictedPosition()
{
    // The same scene, predicted 50 ms ahead: the card is drawn where motiond predicts it.
    QFile original(repository + QStringLiteral("/config/motiond.toml"));
    QVERIFY(original.open(QIODevice::ReadOnly));
    QByteArray text = original.readAll();
    QVERIFY(text.contains("# prediction = 0.016"));
    text.replace("# prediction = 0.016", "prediction = 0.05");
    QFile predicting(m_directory.filePath(QStringLiteral("predicting.toml")));
    QVERIFY(predicting.open(QIODevice::WriteOnly));
    predicting.write(text);
    predicting.close();
    stopMotiond();
    QVERIFY(startMotiond(predicting.fileName()));

    QVERIFY(load(scene(m_socketPath)));
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    // The plain streams and the predicted ones are two subscriptions: the card may first be
    // drawn where card.position says, before the first predicted value has come.
    QTRY_VERIFY_WITH_TIMEOUT(latest(QStringLiteral("card.predicted_position")).isValid(), deadline);
    int ahead = 0;
    for (int move = 0; move < 60; ++move) {
        const QPointF predicted = nextMove("card.predicted_position");
        if (QTest::currentTestFailed())
            return;
        if (predicted != point(latest(QStringLiteral("card.position"))))
            ahead += 1;
    }
    QVERIFY2(ahead > 0, "some of 60 moves were drawn ahead of card.position");
}

void MotiondModuleTest::theKioskExampleMovesItsCard()
{
    // The example as written, on its default socket: MOTIOND_SOCKET.
    qputenv("MOTIOND_SOCKET", m_socketPath.toUtf8());
    QQmlComponent component(m_engine, QUrl::fromLocalFile(repository + QStringLiteral("/clients/qt/examples/kiosk.qml")));
    m_root = component.create();
    qunsetenv("MOTIOND_SOCKET");
    QVERIFY2(m_root, qPrintable(component.errorString()));
    auto *card = m_root->findChild<QQuickItem *>(QStringLiteral("card"));
    QVERIFY(card);
    QSignalSpy moves(card, SIGNAL(yChanged()));
    QTRY_VERIFY_WITH_TIMEOUT(moves.size() >= 5, deadline);
    QVERIFY(card->x() > 0 && card->x() + card->width() < 1920);

    // motiond stops and starts again on the same socket: the example's card carries on.
    stopMotiond();
    QVERIFY(startMotiond(repository + QStringLiteral("/config/motiond.toml")));
    moves.clear();
    QTRY_VERIFY_WITH_TIMEOUT(moves.size() >= 5, deadline);
}

void MotiondModuleTest::aBindingFollowsAnElementAddedAfterIt()
{
    QVERIFY(load(scene(m_socketPath)));
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    QSignalSpy errors(m_connection, SIGNAL(error(QString,QString,QString)));
    // The card's binding turns to "ghost", then to "note", neither of which anyone has
    // added yet: it waits, silently (letting go of ghost's patterns is no error either).
    QSignalSpy replies(m_connection, SIGNAL(replied(int,QString,QVariant)));
    QVERIFY(m_binding->setProperty("element", QStringLiteral("ghost")));
    QVERIFY(m_binding->setProperty("element", QStringLiteral("note")));
    QTRY_VERIFY_WITH_TIMEOUT(std::any_of(replies.cbegin(), replies.cend(), [](const QList<QVariant> &reply) {
        return reply.at(1).toString() == QLatin1String("subscribe")
            && reply.at(2).toMap().value(QStringLiteral("waiting")).toStringList().contains(QStringLiteral("note.position"));
    }), deadline);

    // Another client adds it: the binding follows at once, with the element's values.
    QQmlComponent component(m_engine);
    component.setData(QStringLiteral("import Motiond\nMotiondConnection { socketPath: \"%1\" }").arg(m_socketPath).toUtf8(),
                      QUrl(QStringLiteral("file:///tst_motiond/other.qml")));
    QScopedPointer<QObject> other(component.create());
    QVERIFY2(other, qPrintable(component.errorString()));
    QTRY_VERIFY_WITH_TIMEOUT(other->property("connected").toBool(), deadline);
    int id = 0;
    const QVariantMap note{{QStringLiteral("id"), QStringLiteral("note")}, {QStringLiteral("center"), QVariantList{300, 200}},
                           {QStringLiteral("size"), QVariantList{100, 80}}, {QStringLiteral("rotation"), 0.5}};
    QVERIFY(QMetaObject::invokeMethod(other.data(), "addElement", Q_RETURN_ARG(int, id), Q_ARG(QVariantMap, note)));
    QTRY_COMPARE_WITH_TIMEOUT(m_card->x(), 300.0 - 260, deadline);
    QCOMPARE(m_card->y(), 200.0 - 180);
    QVERIFY2(qAbs(m_card->rotation() - 0.5 * 180 / M_PI) < 1e-9, qPrintable(QString::number(m_card->rotation())));

    // Removed and added again, by this client now: the binding follows the new one.
    QVERIFY(QMetaObject::invokeMethod(other.data(), "removeElement", Q_RETURN_ARG(int, id), Q_ARG(QString, QStringLiteral("note"))));
    const QVariantMap again{{QStringLiteral("id"), QStringLiteral("note")}, {QStringLiteral("center"), QVariantList{700, 500}},
                            {QStringLiteral("size"), QVariantList{100, 80}}};
    QVERIFY(QMetaObject::invokeMethod(m_connection, "addElement", Q_RETURN_ARG(int, id), Q_ARG(QVariantMap, again)));
    QTRY_COMPARE_WITH_TIMEOUT(m_card->x(), 700.0 - 260, deadline);
    QCOMPARE(m_card->y(), 500.0 - 180);
    QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().at(2).toString() + QStringLiteral(": ")
                                              + errors.first().at(0).toString() + QStringLiteral(": ") + errors.first().at(1).toString()));
}

namespace {

QByteArray jsonLine(const QJsonObject &object)
{
    return QJsonDocument(object).toJson(QJsonDocument::Compact) + '\n';
}

/// A stand-in for motiond on a socket of its own: it greets each connection with a hello
/// listing `streams`, then hands the connection to `greeted` and each line it reads to
/// `request`. Connections it made are counted.
class FakeMotiond : public QObject
{
public:
    using Greeted = std::function<void(QLocalSocket *)>;
    using Request = std::function<void(QLocalSocket *, const QJsonObject &)>;

    FakeMotiond(const QString &path, const QStringList &streams = {}, Greeted greeted = {}, Request request = {})
        : m_streams(streams), m_greeted(std::move(greeted)), m_request(std::move(request))
    {
        QLocalServer::removeServer(path);
        m_server.listen(path);
        connect(&m_server, &QLocalServer::newConnection, this, [this] {
            while (QLocalSocket *socket = m_server.nextPendingConnection()) {
                connections += 1;
                connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
                connect(socket, &QLocalSocket::readyRead, this, [this, socket] {
                    while (socket->canReadLine()) {
                        const QJsonObject line = QJsonDocument::fromJson(socket->readLine()).object();
                        if (m_request)
                            m_request(socket, line);
                    }
                });
                socket->write(jsonLine({{QStringLiteral("event"), QStringLiteral("hello")}, {QStringLiteral("protocol"), 1},
                                        {QStringLiteral("streams"), QJsonArray::fromStringList(m_streams)},
                                        {QStringLiteral("control"), true}}));
                if (m_greeted)
                    m_greeted(socket);
            }
        });
    }
    bool listening() const { return m_server.isListening(); }

    int connections = 0;

private:
    QLocalServer m_server;
    QStringList m_streams;
    Greeted m_greeted;
    Request m_request;
};

} // namespace

class FakeMotiondTest : public QObject
{
    Q_OBJECT

private slots:
    void initTestCase();
    void init();
    void cleanup();
    void aLineThatIsNotJSONIsAnErrorAndSkipped();
    void aLineOverTheLimitIsAnErrorAndReconnects();
    void aLongLineIsSearchedOnce();
    void aHelloAndAHangUpBacksOff();
    void aBindingWaitsForItsElementOnAnOlderMotiond();

private:
    /// A MotiondConnection on the fake's socket, with the back-off of scene()'s, and the
    /// card's binding when `binding`.
    QObject *load(bool binding = false);

    QTemporaryDir m_directory;
    QString m_socketPath;
    QQmlEngine *m_engine = nullptr;
    QObject *m_root = nullptr;
    QObject *m_connection = nullptr;
};

void FakeMotiondTest::initTestCase()
{
    QVERIFY(m_directory.isValid());
    m_socketPath = m_directory.filePath(QStringLiteral("fake.sock"));
}

void FakeMotiondTest::init()
{
    m_engine = new QQmlEngine;
    m_engine->addImportPath(QStringLiteral(MOTIOND_IMPORT_PATH));
}

void FakeMotiondTest::cleanup()
{
    delete m_root;
    m_root = nullptr;
    delete m_engine;
    m_engine = nullptr;
}

QObject *FakeMotiondTest::load(bool binding)
{
    const QString qml = QStringLiteral(R"(
import QtQuick
import Motiond
Item {
    MotiondConnection { objectName: "connection"; id: motiond; socketPath: "%1"; firstRetry: 50; maxRetry: 400 }
    Item { id: card; objectName: "card"; width: 520; height: 360 }
    %2
}
)").arg(m_socketPath, binding ? QStringLiteral("MotiondBinding { objectName: \"binding\"; connection: motiond; element: \"note\"; target: card }") : QString());
    QQmlComponent component(m_engine);
    component.setData(qml.toUtf8(), QUrl(QStringLiteral("file:///tst_motiond/fake.qml")));
    m_root = component.create();
    if (!m_root) {
        qWarning("%s", qPrintable(component.errorString()));
        return nullptr;
    }
    m_connection = m_root->findChild<QObject *>(QStringLiteral("connection"));
    return m_root;
}

void FakeMotiondTest::aLineThatIsNotJSONIsAnErrorAndSkipped()
{
    FakeMotiond fake(m_socketPath, {}, [](QLocalSocket *socket) {
        socket->write("this is not JSON\n[1, 2]\n");
        socket->write(jsonLine({{QStringLiteral("event"), QStringLiteral("value")}, {QStringLiteral("stream"), QStringLiteral("screen.idle")},
                                {QStringLiteral("value"), true}, {QStringLiteral("t"), 1.5}}));
    });
    QVERIFY(fake.listening());
    QVERIFY(load());
    QSignalSpy errors(m_connection, SIGNAL(error(QString,QString,QString)));
    QSignalSpy events(m_connection, SIGNAL(event(QVariantMap)));
    QSignalSpy values(m_connection, SIGNAL(value(QString,QVariant,double)));
    QTRY_COMPARE_WITH_TIMEOUT(values.size(), 1, deadline);
    QCOMPARE(values.at(0).at(0).toString(), QStringLiteral("screen.idle"));
    QCOMPARE(events.size(), 0);   // not an empty event per line it could not read
    QCOMPARE(errors.size(), 2);
    for (const QList<QVariant> &error : std::as_const(errors)) {
        QCOMPARE(error.at(0).toString(), QStringLiteral("bad_json"));
        QCOMPARE(error.at(2).toString(), QString());
    }
    QVERIFY2(errors.at(0).at(1).toString().contains(QLatin1String("not JSON")), qPrintable(errors.at(0).at(1).toString()));
    QVERIFY2(errors.at(1).at(1).toString().contains(QLatin1String("not a JSON object")), qPrintable(errors.at(1).at(1).toString()));
    QVERIFY(m_connection->property("connected").toBool());
    QCOMPARE(fake.connections, 1);
}

void FakeMotiondTest::aLineOverTheLimitIsAnErrorAndReconnects()
{
    // The first connection gets one byte more than the limit, and no newline; the next one
    // is left in peace.
    const qsizetype limit = 16 * 1024 * 1024;
    FakeMotiond fake(m_socketPath, {}, [&fake, limit](QLocalSocket *socket) {
        if (fake.connections == 1)
            socket->write(QByteArray(limit + 1, 'x'));
    });
    QVERIFY(fake.listening());
    QVERIFY(load());
    QSignalSpy errors(m_connection, SIGNAL(error(QString,QString,QString)));
    QTRY_VERIFY_WITH_TIMEOUT(errors.size() >= 1, deadline);
    QCOMPARE(errors.at(0).at(0).toString(), QStringLiteral("line_too_long"));
    QCOMPARE(errors.at(0).at(2).toString(), QString());
    QTRY_COMPARE_WITH_TIMEOUT(fake.connections, 2, deadline);
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    QCOMPARE(errors.size(), 1);
}

void FakeMotiondTest::aLongLineIsSearchedOnce()
{
    // A line just under the limit, in 1 KiB writes, each read by the client before the next
    // is written: searching the whole buffer on each read is some 15,000 searches of 7 MiB
    // on average (over 100 GB), tens of seconds; searching each byte once takes a fraction
    // of a second here.
    const QByteArray line = jsonLine({{QStringLiteral("event"), QStringLiteral("device")},
                                      {QStringLiteral("pad"), QString(15 * 1024 * 1024, QLatin1Char('x'))}});
    QLocalSocket *peer = nullptr;
    FakeMotiond fake(m_socketPath, {}, [&peer](QLocalSocket *socket) { peer = socket; });
    QVERIFY(fake.listening());
    QVERIFY(load());
    QTRY_VERIFY_WITH_TIMEOUT(m_connection->property("connected").toBool(), deadline);
    QSignalSpy events(m_connection, SIGNAL(event(QVariantMap)));
    QElapsedTimer sending;
    sending.start();
    const qsizetype piece = 1024;
    for (qsizetype offset = 0; offset < line.size(); offset += piece) {
        peer->write(line.mid(offset, piece));
        peer->flush();
        QCoreApplication::processEvents();   // the client reads what came
        QVERIFY2(sending.elapsed() < 2 * deadline, "the client took too long to read the line's pieces");
    }
    QTRY_COMPARE_WITH_TIMEOUT(events.size(), 1, deadline);
    const qint64 took = sending.elapsed();
    qInfo("a %lld-byte line in %lld-byte writes was read in %lld ms", qlonglong(line.size()), qlonglong(piece), took);
    QCOMPARE(events.at(0).at(0).toMap().value(QStringLiteral("pad")).toString().size(), 15 * 1024 * 1024);
    // Under a second here, over 20 s when each read searched the whole buffer: the bound
    // leaves room for a loaded machine.
    QVERIFY2(took < 8000, qPrintable(QStringLiteral("reading the line took %1 ms").arg(took)));
}

void FakeMotiondTest::aHelloAndAHangUpBacksOff()
{
    // A peer that says hello and hangs up at once: each such connection is a failure, so
    // the waits double (50, 100, 200, then 400 ms at most, a random point in their upper
    // halves): at most 1 + 4 + 2000/200 = 15 connections in two seconds, about 9 on average,
    // where a back-off started afresh at each hello would make 40 or more.
    FakeMotiond fake(m_socketPath, {}, [](QLocalSocket *socket) { socket->disconnectFromServer(); });
    QVERIFY(fake.listening());
    QVERIFY(load());
    QTRY_VERIFY_WITH_TIMEOUT(fake.connections >= 1, deadline);
    QTest::qWait(2000);
    qInfo("%d connections in two seconds", fake.connections);
    QVERIFY2(fake.connections <= 15, qPrintable(QStringLiteral("%1 connections in two seconds").arg(fake.connections)));
    QVERIFY2(fake.connections >= 3, qPrintable(QStringLiteral("%1 connections in two seconds").arg(fake.connections)));
}

void FakeMotiondTest::aBindingWaitsForItsElementOnAnOlderMotiond()
{
    // A motiond from before optional subscriptions: it ignores "optional", refuses a whole
    // subscribe with unknown_stream for one pattern matching nothing, and sends the values
    // of what it subscribed. The note appears on it after a while.
    QStringList streams{QStringLiteral("screen.idle")};
    const QJsonObject values{{QStringLiteral("note.position"), QJsonObject{{QStringLiteral("x"), 300}, {QStringLiteral("y"), 200}}},
                             {QStringLiteral("note.rotation"), 0}, {QStringLiteral("note.scale"), 1}};
    int refused = 0;
    QList<QJsonObject> requests;
    FakeMotiond fake(m_socketPath, streams, {}, [&](QLocalSocket *socket, const QJsonObject &request) {
        requests.append(request);
        const QJsonValue id = request.value(QStringLiteral("id"));
        const QStringList patterns = request.value(QStringLiteral("streams")).toVariant().toStringList();
        QStringList found;
        for (const QString &pattern : patterns) {
            const QRegularExpression glob(QRegularExpression::wildcardToRegularExpression(pattern));
            const QStringList matches = streams.filter(glob);
            if (matches.isEmpty()) {
                refused += 1;
                socket->write(jsonLine({{QStringLiteral("id"), id}, {QStringLiteral("ok"), false},
                                        {QStringLiteral("error"), QJsonObject{{QStringLiteral("code"), QStringLiteral("unknown_stream")},
                                                                              {QStringLiteral("message"), QStringLiteral("no stream matches ") + pattern}}}}));
                return;
            }
            found += matches;
        }
        socket->write(jsonLine({{QStringLiteral("id"), id}, {QStringLiteral("ok"), true},
                                {QStringLiteral("result"), QJsonObject{{QStringLiteral("streams"), QJsonArray::fromStringList(found)}}}}));
        if (request.value(QStringLiteral("op")).toString() != QLatin1String("subscribe"))
            return;
        for (const QString &stream : std::as_const(found)) {
            socket->write(jsonLine({{QStringLiteral("event"), QStringLiteral("value")}, {QStringLiteral("stream"), stream},
                                    {QStringLiteral("value"), values.value(stream)}, {QStringLiteral("t"), 1.0}}));
        }
    });
    QVERIFY(fake.listening());
    QVERIFY(load(true));
    QSignalSpy errors(m_connection, SIGNAL(error(QString,QString,QString)));
    QTRY_VERIFY_WITH_TIMEOUT(refused >= 2, deadline);   // the optional subscribe, then note.position alone
    auto *card = m_root->findChild<QQuickItem *>(QStringLiteral("card"));
    QCOMPARE(card->x(), 0.0);
    streams += {QStringLiteral("note.position"), QStringLiteral("note.rotation"), QStringLiteral("note.scale")};
    QTRY_COMPARE_WITH_TIMEOUT(card->x(), 300.0 - 260, deadline);
    QCOMPARE(card->y(), 200.0 - 180);
    // The note goes, and the binding turns elsewhere: letting go of what no longer exists,
    // or never did, is no error either.
    streams = QStringList{QStringLiteral("screen.idle")};
    QVERIFY(m_root->findChild<QObject *>(QStringLiteral("binding"))->setProperty("element", QStringLiteral("ghost")));
    const auto asked = [&requests](const QString &op, const QString &pattern) {
        return std::any_of(requests.cbegin(), requests.cend(), [&](const QJsonObject &request) {
            return request.value(QStringLiteral("op")).toString() == op
                && request.value(QStringLiteral("streams")).toArray() == QJsonArray{pattern};
        });
    };
    // The note's patterns go one by one; ghost.position alone comes after the refusal of
    // ghost's optional subscribe, so all those answers were read by then.
    QTRY_VERIFY_WITH_TIMEOUT(asked(QStringLiteral("subscribe"), QStringLiteral("ghost.position")), deadline);
    QVERIFY(asked(QStringLiteral("unsubscribe"), QStringLiteral("note.position")));
    QVERIFY2(errors.isEmpty(), qPrintable(errors.isEmpty() ? QString() : errors.first().at(0).toString() + QStringLiteral(": ") + errors.first().at(1).toString()));
    QCOMPARE(fake.connections, 1);
}

namespace {

bool isTestFunction(const QObject &test, const char *argument)
{
    const QByteArray name = QByteArray(argument).split(':').first();   // function:tag
    return test.metaObject()->indexOfSlot(name + "()") >= 0;
}

/// Runs `test` with the arguments less the test functions only `other` has, so that
/// `tst_motiond aHelloAndAHangUpBacksOff` runs that function alone; runs nothing when the
/// arguments name only the other's functions.
int run(QObject &test, const QObject &other, int argc, char **argv)
{
    std::vector<char *> arguments{argv[0]};
    bool namedMine = false;
    bool namedOthers = false;
    for (int index = 1; index < argc; ++index) {
        if (isTestFunction(test, argv[index])) {
            namedMine = true;
        } else if (isTestFunction(other, argv[index])) {
            namedOthers = true;
            continue;
        }
        arguments.push_back(argv[index]);
    }
    if (namedOthers && !namedMine)
        return 0;
    return QTest::qExec(&test, int(arguments.size()), arguments.data());
}

} // namespace

/// Both classes' tests; the exit status is how many failed, as QTEST_MAIN's is.
int main(int argc, char **argv)
{
    QGuiApplication application(argc, argv);
    FakeMotiondTest fake;
    MotiondModuleTest real;
    const int failed = run(fake, real, argc, argv) + run(real, fake, argc, argv);
    return qMin(failed, 127);
}

#include "tst_motiond.moc"
