#include "motiondconnection.h"

#include <QJSValue>
#include <QJsonArray>
#include <QJsonDocument>
#include <QRandomGenerator>
#include <QtGlobal>

namespace {

/// Where motiond listens unless told otherwise: MOTIOND_SOCKET, as motionctl reads it.
QString defaultSocketPath()
{
    const QString fromEnvironment = qEnvironmentVariable("MOTIOND_SOCKET");
    return fromEnvironment.isEmpty() ? QStringLiteral("/run/motiond/motiond.sock") : fromEnvironment;
}

/// A QML value as JSON: JavaScript objects arrive as QJSValue, others as plain variants.
QJsonValue jsonValue(const QVariant &value)
{
    if (value.metaType() == QMetaType::fromType<QJSValue>())
        return QJsonValue::fromVariant(value.value<QJSValue>().toVariant());
    return QJsonValue::fromVariant(value);
}

QJsonObject jsonObject(const QVariantMap &map)
{
    QJsonObject object;
    for (auto it = map.cbegin(); it != map.cend(); ++it)
        object.insert(it.key(), jsonValue(it.value()));
    return object;
}

} // namespace

MotiondConnection::MotiondConnection(QObject *parent)
    : QObject(parent), m_socketPath(defaultSocketPath())
{
    m_retryTimer.setSingleShot(true);
    connect(&m_retryTimer, &QTimer::timeout, this, &MotiondConnection::connectNow);
    m_fallbackTimer.setInterval(fallbackRetry);
    connect(&m_fallbackTimer, &QTimer::timeout, this, &MotiondConnection::retryWaiting);
}

MotiondConnection::~MotiondConnection()
{
    if (m_socket) {
        m_socket->disconnect(this);
        m_socket->abort();
    }
}

// Properties

void MotiondConnection::setSocketPath(const QString &path)
{
    if (path == m_socketPath)
        return;
    m_socketPath = path;
    emit socketPathChanged();
    if (m_complete && m_active)
        connectNow();
}

void MotiondConnection::setToken(const QString &token)
{
    if (token == m_token)
        return;
    m_token = token;
    emit tokenChanged();
    if (m_state == Connected && !m_token.isEmpty())
        enqueue(QStringLiteral("auth"), {{QStringLiteral("token"), m_token}});
}

void MotiondConnection::setActive(bool active)
{
    if (active == m_active)
        return;
    m_active = active;
    emit activeChanged();
    if (!m_complete)
        return;
    if (active) {
        m_failures = 0;
        connectNow();
    } else {
        m_retryTimer.stop();
        if (m_socket)
            m_socket->abort();   // lost() follows, and schedules nothing while inactive
    }
}

void MotiondConnection::setFirstRetry(int milliseconds)
{
    if (milliseconds == m_firstRetry)
        return;
    m_firstRetry = qMax(1, milliseconds);
    emit retryChanged();
}

void MotiondConnection::setMaxRetry(int milliseconds)
{
    if (milliseconds == m_maxRetry)
        return;
    m_maxRetry = qMax(1, milliseconds);
    emit retryChanged();
}

void MotiondConnection::setRequestTimeout(int milliseconds)
{
    if (milliseconds == m_requestTimeout)
        return;
    m_requestTimeout = milliseconds;
    emit requestTimeoutChanged();
}

void MotiondConnection::componentComplete()
{
    m_complete = true;
    if (m_active)
        connectNow();
}

void MotiondConnection::setState(State state)
{
    if (state == m_state)
        return;
    m_state = state;
    emit stateChanged();
}

void MotiondConnection::setControl(bool control)
{
    if (control == m_control)
        return;
    m_control = control;
    emit controlChanged();
}

// The connection

void MotiondConnection::connectNow()
{
    m_retryTimer.stop();
    if (m_socket) {
        QLocalSocket *old = m_socket;
        m_socket = nullptr;
        old->disconnect(this);
        old->abort();
        old->deleteLater();
        lost(QStringLiteral("reconnecting"));
        m_retryTimer.stop();
    }
    m_buffer.clear();
    m_scanned = 0;
    m_socket = new QLocalSocket(this);
    QLocalSocket *socket = m_socket;
    connect(socket, &QLocalSocket::readyRead, this, &MotiondConnection::readLines);
    connect(socket, &QLocalSocket::disconnected, this, [this, socket] {
        if (socket == m_socket)
            lost(QStringLiteral("motiond closed the connection"));
    });
    connect(socket, &QLocalSocket::errorOccurred, this, [this, socket] {
        if (socket == m_socket)
            lost(socket->errorString());
    });
    setState(Connecting);
    socket->connectToServer(m_socketPath);
}

/// The connection ended (or never opened): what was sent and not answered will never be,
/// and the next attempt waits its turn.
void MotiondConnection::lost(const QString &reason)
{
    if (m_socket) {
        QLocalSocket *socket = m_socket;
        m_socket = nullptr;
        socket->disconnect(this);
        socket->abort();
        socket->deleteLater();
    }
    m_buffer.clear();
    m_scanned = 0;
    // Only a connection that lasted counts as a success: one dropped soon after its hello
    // (a daemon crashing at each start, a peer that is not motiond) backs off like a refusal.
    if (m_greetedAt.isValid() && m_greetedAt.elapsed() >= stableAfter)
        m_failures = 0;
    m_greetedAt.invalidate();
    m_optionalRefused = false;
    m_fallbackTimer.stop();
    for (Held &held : m_held)
        held.waiting.clear();
    setControl(false);
    if (!m_streams.isEmpty()) {
        m_streams.clear();
        emit streamsChanged();
    }
    const QList<int> ids = m_pending.keys();
    for (const int id : ids) {
        if (!m_pending.value(id).sent)
            continue;   // queued: it goes out on the next connection
        const QString op = m_pending.value(id).message.value(QStringLiteral("op")).toString();
        finish(id);
        emit error(QStringLiteral("disconnected"),
                   QStringLiteral("the connection to motiond ended (%1) before it answered").arg(reason), op);
    }
    setState(Disconnected);
    if (m_active)
        scheduleRetry();
}

void MotiondConnection::scheduleRetry()
{
    const qint64 ceiling = qMin<qint64>(m_maxRetry, qint64(m_firstRetry) << qMin(m_failures, 20));
    const qint64 delay = ceiling / 2 + qint64(QRandomGenerator::global()->bounded(1.0) * ceiling / 2);
    m_failures += 1;
    m_retryTimer.start(int(delay));
}

void MotiondConnection::readLines()
{
    if (!m_socket)
        return;
    QLocalSocket *socket = m_socket;
    m_buffer += socket->readAll();
    qsizetype start = 0;
    for (;;) {
        // What an earlier read searched holds no newline: each byte is searched once, so a
        // long line arriving in many reads costs its length, not its length squared.
        const qsizetype end = m_buffer.indexOf('\n', qMax(start, m_scanned));
        if (end < 0)
            break;
        if (end - start > lineLimit)
            return refuseLongLine();
        handleLine(m_buffer.mid(start, end - start));
        if (socket != m_socket)
            return;   // a handler lost the connection
        start = end + 1;
    }
    m_buffer.remove(0, start);
    m_scanned = m_buffer.size();
    if (m_buffer.size() > lineLimit)
        return refuseLongLine();
    emit linesRead();
}

/// A line over lineLimit: no motiond sends one, and what follows it cannot be trusted to
/// be in step, so the connection is dropped (freeing the buffer) for a fresh one.
void MotiondConnection::refuseLongLine()
{
    const QString reason = QStringLiteral("motiond sent a line longer than %1 bytes").arg(lineLimit);
    lost(reason);
    emit error(QStringLiteral("line_too_long"), reason, QString());
}

void MotiondConnection::handleLine(const QByteArray &line)
{
    QJsonParseError problem;
    const QJsonDocument document = QJsonDocument::fromJson(line, &problem);
    if (!document.isObject()) {
        const QString what = problem.error != QJsonParseError::NoError
            ? QStringLiteral("is not JSON (%1 at byte %2)").arg(problem.errorString()).arg(problem.offset + 1)
            : QStringLiteral("is not a JSON object");
        emit error(QStringLiteral("bad_json"), QStringLiteral("motiond sent a line that %1; it was skipped").arg(what), QString());
        return;
    }
    const QJsonObject message = document.object();
    if (message.contains(QStringLiteral("id")) && message.contains(QStringLiteral("ok")))
        return answer(message);
    const QString kind = message.value(QStringLiteral("event")).toString();
    const QString stream = message.value(QStringLiteral("stream")).toString();
    if (kind == QLatin1String("hello"))
        return greeted(message);
    if (kind == QLatin1String("value")) {
        emit value(stream, message.value(QStringLiteral("value")).toVariant(),
                   message.value(QStringLiteral("t")).toDouble());
        return;
    }
    if (kind == QLatin1String("state") && stream == QLatin1String("screen.gesture")) {
        emit screenGesture(message.value(QStringLiteral("name")).toString(),
                           message.value(QStringLiteral("gesture")).toString(),
                           message.value(QStringLiteral("state")).toString(), message.toVariantMap());
        return;
    }
    if (kind == QLatin1String("state")) {
        emit gesture(stream, message.value(QStringLiteral("state")).toString(), message.toVariantMap());
        return;
    }
    emit event(message.toVariantMap());
}

/// A new connection is ready: authenticate, add back the elements, subscribe again, then
/// send what waited. motiond answers in order, so an element exists before it is subscribed to.
void MotiondConnection::greeted(const QJsonObject &hello)
{
    m_greetedAt.start();
    m_streams.clear();
    for (const QJsonValue stream : hello.value(QStringLiteral("streams")).toArray())
        m_streams.append(stream.toString());
    emit streamsChanged();
    setControl(hello.value(QStringLiteral("control")).toBool());
    if (!m_token.isEmpty())
        enqueue(QStringLiteral("auth"), {{QStringLiteral("token"), m_token}});
    for (const QJsonObject &element : std::as_const(m_elements))
        m_restoring.insert(enqueue(QStringLiteral("add_element"), {{QStringLiteral("element"), element}}));
    // What was held before this connection; a hold made while disconnected is sent now too.
    const QList<int> handles = m_held.keys();
    for (const int handle : handles)
        subscribeHeld(handle);
    setState(Connected);
    for (Pending &pending : m_pending) {
        if (!pending.sent)
            transmit(pending);
    }
}

void MotiondConnection::answer(const QJsonObject &reply)
{
    const int id = reply.value(QStringLiteral("id")).toInt(-1);
    const QString op = m_pending.value(id).message.value(QStringLiteral("op")).toString();
    const bool known = m_pending.contains(id);
    const bool restoring = m_restoring.remove(id);
    const bool ok = reply.value(QStringLiteral("ok")).toBool();
    const QString code = reply.value(QStringLiteral("error")).toObject().value(QStringLiteral("code")).toString();
    if (restoring && !ok && code == QLatin1String("exists")) {
        if (known)
            finish(id);
        return;   // motiond kept the element across its restart
    }
    const bool optional = m_optionalRequests.contains(id);
    const int optionalHandle = m_optionalRequests.value(id);
    const bool fallback = m_fallbackRequests.contains(id);
    const QPair<int, QString> fallbackPattern = m_fallbackRequests.value(id);
    const bool quiet = m_quiet.contains(id);
    if (!ok && code == QLatin1String("unknown_stream") && (optional || fallback || quiet)) {
        if (known)
            finish(id);
        if (optional) {
            // A motiond older than optional subscriptions: it subscribed none of them.
            m_optionalRefused = true;
            if (m_held.contains(optionalHandle)) {
                m_held[optionalHandle].waiting = m_held.value(optionalHandle).patterns;
                subscribeEachWaiting(optionalHandle);
            }
        }
        return;   // a fallback pattern still matching nothing stays waiting
    }
    if (fallback && ok) {
        finish(id);
        if (m_held.contains(fallbackPattern.first))
            m_held[fallbackPattern.first].waiting.removeAll(fallbackPattern.second);
        return;
    }
    if (known && reply.value(QStringLiteral("ok")).toBool()) {
        const QJsonObject message = m_pending.value(id).message;
        finish(id);
        const QJsonValue result = reply.value(QStringLiteral("result"));
        if (op == QLatin1String("add_element")) {
            const QJsonObject element = message.value(QStringLiteral("element")).toObject();
            m_elements.insert(element.value(QStringLiteral("id")).toString(), element);
        } else if (op == QLatin1String("auth")) {
            setControl(result.toObject().value(QStringLiteral("control")).toBool());
        }
        emit replied(id, op, result.toVariant());
        return;
    }
    if (reply.value(QStringLiteral("ok")).toBool())
        return;   // a reply to a request that timed out already
    if (known)
        finish(id);
    // An error, even to a request that timed out or one motiond could not read the id of.
    const QJsonObject problem = reply.value(QStringLiteral("error")).toObject();
    emit error(problem.value(QStringLiteral("code")).toString(),
               problem.value(QStringLiteral("message")).toString(), op);
}

// Requests

int MotiondConnection::enqueue(const QString &op, const QJsonObject &arguments)
{
    const int id = m_nextID++;
    Pending pending;
    pending.message = arguments;
    pending.message.insert(QStringLiteral("id"), id);
    pending.message.insert(QStringLiteral("op"), op);
    pending.timer = new QTimer(this);
    pending.timer->setSingleShot(true);
    connect(pending.timer, &QTimer::timeout, this, [this, id, op] {
        if (!m_pending.contains(id))
            return;
        finish(id);
        emit error(QStringLiteral("timeout"),
                   QStringLiteral("motiond did not answer %1 within %2 ms").arg(op).arg(m_requestTimeout), op);
    });
    pending.timer->start(m_requestTimeout);
    m_pending.insert(id, pending);
    if (m_state == Connected)
        transmit(m_pending[id]);
    return id;
}

void MotiondConnection::transmit(Pending &pending)
{
    pending.sent = true;
    m_socket->write(QJsonDocument(pending.message).toJson(QJsonDocument::Compact) + '\n');
}

void MotiondConnection::finish(int id)
{
    m_optionalRequests.remove(id);
    m_fallbackRequests.remove(id);
    m_quiet.remove(id);
    const Pending pending = m_pending.take(id);
    if (pending.timer)
        pending.timer->deleteLater();
}

int MotiondConnection::request(const QString &op, const QVariantMap &arguments)
{
    return enqueue(op, jsonObject(arguments));
}

int MotiondConnection::set(const QString &stream, const QVariant &value)
{
    return enqueue(QStringLiteral("set"), {{QStringLiteral("stream"), stream}, {QStringLiteral("value"), jsonValue(value)}});
}

int MotiondConnection::get(const QString &stream)
{
    return enqueue(QStringLiteral("get"), {{QStringLiteral("stream"), stream}});
}

int MotiondConnection::addElement(const QVariantMap &element)
{
    return enqueue(QStringLiteral("add_element"), {{QStringLiteral("element"), jsonObject(element)}});
}

int MotiondConnection::removeElement(const QString &id)
{
    m_elements.remove(id);
    return enqueue(QStringLiteral("remove_element"), {{QStringLiteral("element"), id}});
}

// Subscriptions

int MotiondConnection::subscribe(const QStringList &patterns)
{
    const int handle = hold(patterns, false);
    m_qmlHolds.append(handle);
    return handle;
}

void MotiondConnection::unsubscribe(const QStringList &patterns)
{
    const QList<int> holds = m_qmlHolds;
    for (const int handle : holds) {
        Held &held = m_held[handle];
        QStringList released;
        for (const QString &pattern : patterns) {
            if (held.patterns.removeAll(pattern) && !heldElsewhere(pattern, handle))
                released.append(pattern);
        }
        if (held.patterns.isEmpty()) {
            m_held.remove(handle);
            m_qmlHolds.removeAll(handle);
        }
        if (m_state == Connected)
            sendUnsubscribe(released, false);
    }
}

int MotiondConnection::hold(const QStringList &patterns, bool optional)
{
    const int handle = m_nextHandle++;
    m_held.insert(handle, Held{patterns, optional, {}});
    if (m_state == Connected)
        subscribeHeld(handle);
    return handle;
}

void MotiondConnection::release(int handle)
{
    const Held held = m_held.take(handle);
    QStringList released;
    for (const QString &pattern : held.patterns) {
        if (!heldElsewhere(pattern, handle) && !held.waiting.contains(pattern))
            released.append(pattern);
    }
    if (m_state == Connected)
        sendUnsubscribe(released, held.optional);
}

/// One subscribe per holder, so a pattern motiond refuses costs its holder alone.
void MotiondConnection::subscribeHeld(int handle)
{
    Held &held = m_held[handle];
    if (!held.optional) {
        enqueue(QStringLiteral("subscribe"), {{QStringLiteral("streams"), QJsonArray::fromStringList(held.patterns)}});
    } else if (m_optionalRefused) {
        held.waiting = held.patterns;
        subscribeEachWaiting(handle);
    } else {
        const int id = enqueue(QStringLiteral("subscribe"), {{QStringLiteral("streams"), QJsonArray::fromStringList(held.patterns)},
                                                              {QStringLiteral("optional"), true}});
        m_optionalRequests.insert(id, handle);
    }
}

/// The fallback for a motiond without optional subscriptions, which refuses a whole
/// subscribe for one pattern matching nothing: each waiting pattern is asked for alone,
/// so those that match are subscribed now and the others are tried again later.
void MotiondConnection::subscribeEachWaiting(int handle)
{
    const QStringList waiting = m_held.value(handle).waiting;
    for (const QString &pattern : waiting) {
        const int id = enqueue(QStringLiteral("subscribe"), {{QStringLiteral("streams"), QJsonArray{pattern}}});
        m_fallbackRequests.insert(id, {handle, pattern});
    }
    m_fallbackTimer.start();
}

void MotiondConnection::retryWaiting()
{
    if (m_state != Connected || !m_fallbackRequests.isEmpty())
        return;   // the last attempts are still unanswered: no pile of requests
    bool waiting = false;
    const QList<int> handles = m_held.keys();
    for (const int handle : handles) {
        if (!m_held.value(handle).waiting.isEmpty()) {
            waiting = true;
            subscribeEachWaiting(handle);
        }
    }
    if (!waiting)
        m_fallbackTimer.stop();
}

/// Unsubscribes `patterns`. An `optional` one may match nothing now (its element gone):
/// motiond answers that with `unknown_stream` unless it holds the pattern, which is no
/// error here; and one older than optional subscriptions refuses the whole request for it,
/// so there each pattern goes alone.
void MotiondConnection::sendUnsubscribe(const QStringList &patterns, bool optional)
{
    if (patterns.isEmpty())
        return;
    QList<QStringList> requests{patterns};
    if (optional && m_optionalRefused) {
        requests.clear();
        for (const QString &pattern : patterns)
            requests.append({pattern});
    }
    for (const QStringList &streams : std::as_const(requests)) {
        const int id = enqueue(QStringLiteral("unsubscribe"), {{QStringLiteral("streams"), QJsonArray::fromStringList(streams)}});
        if (optional)
            m_quiet.insert(id);
    }
}

bool MotiondConnection::heldElsewhere(const QString &pattern, int except) const
{
    for (auto it = m_held.cbegin(); it != m_held.cend(); ++it) {
        if (it.key() != except && it.value().patterns.contains(pattern))
            return true;
    }
    return false;
}
