// MotiondConnection: one client connection to motiond's Unix socket (docs/protocol.md),
// kept open: it reconnects by itself, and after each reconnect sends the token again, adds
// again the elements it added and subscribes again, as clients/js/motiond.js does for pages.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QSet>
#include <QJsonObject>
#include <QList>
#include <QLocalSocket>
#include <QObject>
#include <QQmlParserStatus>
#include <QStringList>
#include <QTimer>
#include <QVariant>
#include <QtQml/qqmlregistration.h>

/// A connection to motiond, usable from QML:
///
///     MotiondConnection {
///         id: motiond
///         onValue: (stream, value, t) => console.log(stream, JSON.stringify(value))
///         onError: (code, message, op) => console.warn(op, code, message)
///         Component.onCompleted: subscribe(["screen.idle"])
///     }
///
/// Every error reply motiond sends reaches `error`, whoever made the request (a binding's
/// subscribe, the auth a reconnect sends), so a UI never loses one.
class MotiondConnection : public QObject, public QQmlParserStatus
{
    Q_OBJECT
    Q_INTERFACES(QQmlParserStatus)
    QML_ELEMENT

    /// The socket: $MOTIOND_SOCKET, or /run/motiond/motiond.sock, unless set. Changing it
    /// reconnects to the new path.
    Q_PROPERTY(QString socketPath READ socketPath WRITE setSocketPath NOTIFY socketPathChanged)
    /// The control token (`[websocket] control_token_file`'s), sent with `auth` on every
    /// connection when not empty. A peer whose user or group motiond trusts needs none.
    Q_PROPERTY(QString token READ token WRITE setToken NOTIFY tokenChanged)
    /// Whether to be connected at all; false closes the connection and stops reconnecting.
    Q_PROPERTY(bool active READ active WRITE setActive NOTIFY activeChanged)
    /// Connecting (a connection is being made, or made and not yet greeted), Connected (the
    /// hello came) or Disconnected (waiting to reconnect, or inactive).
    Q_PROPERTY(State state READ state NOTIFY stateChanged)
    /// state == Connected.
    Q_PROPERTY(bool connected READ connected NOTIFY stateChanged)
    /// Whether this connection may use the control operations (hello's `control`, or auth).
    Q_PROPERTY(bool control READ control NOTIFY controlChanged)
    /// The streams the current connection's hello listed (empty while not connected).
    Q_PROPERTY(QStringList streams READ streams NOTIFY streamsChanged)
    /// Milliseconds before the first reconnect attempt; each failure doubles it, up to
    /// maxRetry, and the wait is a random point in the upper half of that (so a restarted
    /// daemon is not met by every kiosk at once). 250 and 10000 by default, as motiond.js.
    /// A connection counts as a success, starting the back-off afresh, only once it has
    /// lived stableAfter ms past its hello: a peer that says hello and drops is a failure.
    Q_PROPERTY(int firstRetry READ firstRetry WRITE setFirstRetry NOTIFY retryChanged)
    Q_PROPERTY(int maxRetry READ maxRetry WRITE setMaxRetry NOTIFY retryChanged)
    /// Milliseconds a request may wait for its reply (also while queued until a connection
    /// says hello) before `error` reports it as `timeout`. 5000 by default.
    Q_PROPERTY(int requestTimeout READ requestTimeout WRITE setRequestTimeout NOTIFY requestTimeoutChanged)

public:
    enum State { Connecting, Connected, Disconnected };
    Q_ENUM(State)

    /// The longest line read from motiond, in bytes (16 MiB, as the Python client's
    /// LINE_LIMIT): far above what motiond sends, which drops a client whose unsent output
    /// passes 4 MiB. A longer line is no motiond's, and reading on would only grow the buffer.
    static constexpr qsizetype lineLimit = 16 * 1024 * 1024;
    /// Milliseconds a connection must live past its hello for the back-off to start afresh.
    static constexpr int stableAfter = 10000;
    /// Milliseconds between attempts to subscribe an optional pattern on a motiond that
    /// refuses patterns matching nothing (one older than optional subscriptions).
    static constexpr int fallbackRetry = 2000;

    explicit MotiondConnection(QObject *parent = nullptr);
    ~MotiondConnection() override;

    QString socketPath() const { return m_socketPath; }
    void setSocketPath(const QString &path);
    QString token() const { return m_token; }
    void setToken(const QString &token);
    bool active() const { return m_active; }
    void setActive(bool active);
    State state() const { return m_state; }
    bool connected() const { return m_state == Connected; }
    bool control() const { return m_control; }
    QStringList streams() const { return m_streams; }
    int firstRetry() const { return m_firstRetry; }
    void setFirstRetry(int milliseconds);
    int maxRetry() const { return m_maxRetry; }
    void setMaxRetry(int milliseconds);
    int requestTimeout() const { return m_requestTimeout; }
    void setRequestTimeout(int milliseconds);

    /// Sends {"op": op, ...arguments}; returns the request's id, which `replied` or `error`
    /// carries. Sent now when connected, else when the next connection says hello.
    Q_INVOKABLE int request(const QString &op, const QVariantMap &arguments = {});
    /// `set`: writes a writable stream (control).
    Q_INVOKABLE int set(const QString &stream, const QVariant &value);
    /// `get`: the stream's value comes in `replied`'s result, {stream, value, t}.
    Q_INVOKABLE int get(const QString &stream);
    /// `add_element` (control), with {id, center, size, rotation?, scale?, z?, interactions?};
    /// added again after each reconnect once motiond accepted it.
    Q_INVOKABLE int addElement(const QVariantMap &element);
    /// `remove_element` (control): the element is no longer added again after reconnects.
    Q_INVOKABLE int removeElement(const QString &id);
    /// Subscribes to names or globs, held across reconnects; their values reach `value`,
    /// and gestures' `state` events `gesture` or `screenGesture`.
    Q_INVOKABLE int subscribe(const QStringList &patterns);
    /// Stops what subscribe(patterns) started (patterns still held otherwise stay).
    Q_INVOKABLE void unsubscribe(const QStringList &patterns);

    /// For bindings: holds `patterns` across reconnects until release(handle). With
    /// `optional`, a pattern that matches no stream yet is no error: motiond holds it and
    /// sends the values of the streams it matches once they appear (an element added later,
    /// ID.predicted_* where motiond predicts). A motiond without optional subscriptions
    /// refuses such a pattern with `unknown_stream`; the connection then subscribes each
    /// pattern alone and tries the refused ones again every fallbackRetry ms.
    int hold(const QStringList &patterns, bool optional);
    void release(int handle);

    void classBegin() override {}
    void componentComplete() override;

signals:
    void socketPathChanged();
    void tokenChanged();
    void activeChanged();
    void stateChanged();
    void controlChanged();
    void streamsChanged();
    void retryChanged();
    void requestTimeoutChanged();

    /// A `value` event: a subscribed stream changed (t: the frame's time, seconds).
    void value(const QString &stream, const QVariant &value, double t);
    /// A `state` event of an element's gesture stream (ID.drag, ID.pinch, ID.rotate, ID.tap):
    /// state is began, ended, cancelled or recognized; event is the whole line.
    void gesture(const QString &stream, const QString &state, const QVariantMap &event);
    /// A `state` event of screen.gesture: a configured [[screen_gesture]] by its name.
    void screenGesture(const QString &name, const QString &gesture, const QString &state,
                       const QVariantMap &event);
    /// Every other event: device, bye, calibration, calibration_touch.
    void event(const QVariantMap &event);
    /// An error reply to any request (code as docs/protocol.md's Errors), or `timeout` when
    /// none came in time, or `disconnected` when the connection ended before the reply.
    /// What motiond sent that the client could not read has an empty op: `bad_json` for a
    /// line that is not a JSON object (skipped), `line_too_long` for a line over lineLimit
    /// bytes (the connection is dropped for a new one).
    void error(const QString &code, const QString &message, const QString &op);
    /// A successful reply to request `id`.
    void replied(int id, const QString &op, const QVariant &result);
    /// After the lines of one read are handled: a frame's lines come in one write, so this
    /// is when its values are all in (bindings move their items here, once per read).
    void linesRead();

private:
    struct Pending {
        QJsonObject message;
        bool sent = false;
        QTimer *timer = nullptr;
    };
    struct Held {
        QStringList patterns;
        bool optional = false;
        /// On a motiond without optional subscriptions: the patterns it refused, tried again.
        QStringList waiting;
    };

    void connectNow();
    void setState(State state);
    void setControl(bool control);
    void lost(const QString &reason);
    void scheduleRetry();
    void readLines();
    void refuseLongLine();
    void handleLine(const QByteArray &line);
    void greeted(const QJsonObject &hello);
    void answer(const QJsonObject &reply);
    int enqueue(const QString &op, const QJsonObject &arguments);
    void transmit(Pending &pending);
    void finish(int id);
    void subscribeHeld(int handle);
    void subscribeEachWaiting(int handle);
    void retryWaiting();
    void sendUnsubscribe(const QStringList &patterns, bool optional);
    bool heldElsewhere(const QString &pattern, int except) const;

    QString m_socketPath;
    QString m_token;
    bool m_active = true;
    bool m_complete = false;
    State m_state = Disconnected;
    bool m_control = false;
    QStringList m_streams;
    int m_firstRetry = 250;
    int m_maxRetry = 10000;
    int m_requestTimeout = 5000;

    QLocalSocket *m_socket = nullptr;
    QByteArray m_buffer;
    /// How much of m_buffer (its unfinished line) was searched for a newline already.
    qsizetype m_scanned = 0;
    QTimer m_retryTimer;
    int m_failures = 0;
    QElapsedTimer m_greetedAt;              // valid while a greeted connection lasts
    int m_nextID = 1;
    QHash<int, Pending> m_pending;
    QHash<int, Held> m_held;
    QList<int> m_qmlHolds;                  // what subscribe() holds, for unsubscribe()
    int m_nextHandle = 1;
    QHash<QString, QJsonObject> m_elements; // id → add_element's element, for reconnects
    /// The requests adding those again after a reconnect: `exists` to one is no error, the
    /// element outlived the connection (motiond keeps its scene across restarts).
    QSet<int> m_restoring;

    /// Optional subscribes in flight, id → the hold they subscribe.
    QHash<int, int> m_optionalRequests;
    /// Whether this connection's motiond refused an optional subscribe (it is older).
    bool m_optionalRefused = false;
    /// The fallback's one-pattern subscribes in flight, id → (hold, pattern).
    QHash<int, QPair<int, QString>> m_fallbackRequests;
    QTimer m_fallbackTimer;
    /// Requests whose `unknown_stream` is no error: unsubscribes of optional patterns,
    /// which may match nothing.
    QSet<int> m_quiet;
};
