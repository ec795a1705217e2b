#include "motiondbinding.h"

#include <QtMath>

namespace {

QPointF point(const QVariant &value)
{
    const QVariantMap map = value.toMap();
    return QPointF(map.value(QStringLiteral("x")).toDouble(), map.value(QStringLiteral("y")).toDouble());
}

} // namespace

MotiondBinding::MotiondBinding(QObject *parent) : QObject(parent) {}

MotiondBinding::~MotiondBinding()
{
    unbind();
}

void MotiondBinding::setConnection(MotiondConnection *connection)
{
    if (connection == m_connection)
        return;
    unbind();
    m_connection = connection;
    emit connectionChanged();
    rebind();
}

void MotiondBinding::setElement(const QString &element)
{
    if (element == m_element)
        return;
    unbind();
    m_element = element;
    emit elementChanged();
    rebind();
}

void MotiondBinding::setTarget(QQuickItem *target)
{
    if (target == m_target)
        return;
    m_target = target;
    emit targetChanged();
    if (m_hasPosition) {
        m_dirty = true;
        apply();
    }
}

void MotiondBinding::setPredicted(bool predicted)
{
    if (predicted == m_predicted)
        return;
    unbind();
    m_predicted = predicted;
    emit predictedChanged();
    rebind();
}

void MotiondBinding::setSize(bool size)
{
    if (size == m_size)
        return;
    unbind();
    m_size = size;
    emit sizeChanged();
    rebind();
}

void MotiondBinding::componentComplete()
{
    m_complete = true;
    rebind();
}

/// Subscribes to the element's streams (again, after a change of element or connection).
/// Values already drawn stay until the new element's come.
void MotiondBinding::rebind()
{
    if (!m_complete || !m_connection || m_element.isEmpty())
        return;
    QStringList names = {QStringLiteral("position"), QStringLiteral("rotation"), QStringLiteral("scale")};
    if (m_size)
        names.append(QStringLiteral("size"));
    QStringList patterns;
    for (const QString &name : std::as_const(names))
        patterns.append(m_element + QLatin1Char('.') + name);
    m_connections.append(connect(m_connection, &MotiondConnection::value, this,
                                 [this](const QString &stream, const QVariant &value) { received(stream, value); }));
    m_connections.append(connect(m_connection, &MotiondConnection::linesRead, this, &MotiondBinding::apply));
    // A daemon after a reconnect may predict nothing: its predictions come anew, or none.
    m_connections.append(connect(m_connection, &MotiondConnection::stateChanged, this, [this] {
        if (!m_connection->connected())
            forgetPredictions();
    }));
    // Optional: the element may not exist yet (a client adds it later), and the binding
    // follows it whenever it does.
    m_plainHold = m_connection->hold(patterns, true);
    // The predicted streams exist only where motiond predicts: held apart, so the plain
    // streams' values come whether or not motiond predicts.
    if (m_predicted)
        m_predictedHold = m_connection->hold({m_element + QStringLiteral(".predicted_*")}, true);
}

void MotiondBinding::unbind()
{
    for (const QMetaObject::Connection &connection : std::as_const(m_connections))
        disconnect(connection);
    m_connections.clear();
    if (m_connection) {
        if (m_plainHold)
            m_connection->release(m_plainHold);
        if (m_predictedHold)
            m_connection->release(m_predictedHold);
    }
    m_plainHold = 0;
    m_predictedHold = 0;
    forgetPredictions();
}

void MotiondBinding::forgetPredictions()
{
    m_latest.hasPredictedPosition = false;
    m_latest.hasPredictedRotation = false;
    m_latest.hasPredictedScale = false;
}

void MotiondBinding::received(const QString &stream, const QVariant &value)
{
    if (stream.size() <= m_element.size() + 1 || !stream.startsWith(m_element)
        || stream.at(m_element.size()) != QLatin1Char('.'))
        return;
    const QStringView name = QStringView(stream).mid(m_element.size() + 1);
    if (name == QLatin1String("position")) {
        m_latest.position = point(value);
        m_hasPosition = true;
    } else if (name == QLatin1String("rotation")) {
        m_latest.rotation = value.toDouble();
    } else if (name == QLatin1String("scale")) {
        m_latest.scale = value.toDouble();
    } else if (name == QLatin1String("size")) {
        const QVariantMap map = value.toMap();
        m_latest.size = QSizeF(map.value(QStringLiteral("width")).toDouble(), map.value(QStringLiteral("height")).toDouble());
        m_latest.hasSize = true;
    } else if (name == QLatin1String("predicted_position") && m_predicted) {
        m_latest.predictedPosition = point(value);
        m_latest.hasPredictedPosition = true;
    } else if (name == QLatin1String("predicted_rotation") && m_predicted) {
        m_latest.predictedRotation = value.toDouble();
        m_latest.hasPredictedRotation = true;
    } else if (name == QLatin1String("predicted_scale") && m_predicted) {
        m_latest.predictedScale = value.toDouble();
        m_latest.hasPredictedScale = true;
    } else {
        return;
    }
    m_dirty = true;
}

/// Moves the target to the latest values, once per read of motiond's lines.
void MotiondBinding::apply()
{
    if (!m_dirty || !m_hasPosition)
        return;
    m_dirty = false;
    m_applied.position = m_latest.hasPredictedPosition ? m_latest.predictedPosition : m_latest.position;
    m_applied.rotation = m_latest.hasPredictedRotation ? m_latest.predictedRotation : m_latest.rotation;
    m_applied.scale = m_latest.hasPredictedScale ? m_latest.predictedScale : m_latest.scale;
    if (m_target) {
        if (m_size && m_latest.hasSize)
            m_target->setSize(m_latest.size);
        m_target->setX(m_applied.position.x() - m_target->width() / 2);
        m_target->setY(m_applied.position.y() - m_target->height() / 2);
        m_target->setRotation(qRadiansToDegrees(m_applied.rotation));
        m_target->setScale(m_applied.scale);
    }
    emit applied();
}
