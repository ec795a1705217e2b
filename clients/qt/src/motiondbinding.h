// MotiondBinding: an Item follows one of motiond's elements, the way motiond.js's bind()
// makes a DOM element follow it.
#pragma once

#include "motiondconnection.h"

#include <QObject>
#include <QPointF>
#include <QPointer>
#include <QQmlParserStatus>
#include <QQuickItem>
#include <QtQml/qqmlregistration.h>

/// Moves `target` as motiond moves the element `element`:
///
///     MotiondBinding { connection: motiond; element: "card"; target: card }
///
/// Units: motiond publishes an element's centre in screen pixels, its rotation in radians
/// (clockwise on screen, as Qt's) and its scale. The target's x and y are in its parent's
/// coordinates, which are taken to be screen pixels: put bound items in a full-screen
/// window at scale 1, in a parent at the window's top-left (as a kiosk is). So
///     x = centre.x - width / 2,  y = centre.y - height / 2,
///     rotation = radians in degrees,  scale = scale,
/// and the item turns and scales about its centre (Item's default transformOrigin), as
/// motiond turns the element about its centre. With `size`, width and height follow ID.size.
///
/// The element need not exist yet: the binding follows it from whenever a client adds it
/// (its subscription is optional, docs/clients-qt.md), and until then leaves the target alone.
///
/// Where motiond predicts touches ([screen] prediction), the item is drawn where the element
/// will be (ID.predicted_position, _rotation, _scale) unless `predicted` is false.
class MotiondBinding : public QObject, public QQmlParserStatus
{
    Q_OBJECT
    Q_INTERFACES(QQmlParserStatus)
    QML_ELEMENT

    Q_PROPERTY(MotiondConnection *connection READ connection WRITE setConnection NOTIFY connectionChanged)
    /// The element's id in motiond's scene ("card" for card.position…).
    Q_PROPERTY(QString element READ element WRITE setElement NOTIFY elementChanged)
    /// The item moved; it may be left unset, to read `position`, `rotation` and `scale` only.
    Q_PROPERTY(QQuickItem *target READ target WRITE setTarget NOTIFY targetChanged)
    /// Whether to draw the predicted values where motiond publishes them (default true).
    Q_PROPERTY(bool predicted READ predicted WRITE setPredicted NOTIFY predictedChanged)
    /// Whether the target's width and height follow ID.size too (default false).
    Q_PROPERTY(bool size READ size WRITE setSize NOTIFY sizeChanged)
    /// Whether a position has come yet (the target is left alone until then).
    Q_PROPERTY(bool ready READ ready NOTIFY applied)
    /// What was applied last: the centre in screen pixels, rotation in radians, scale.
    Q_PROPERTY(QPointF position READ position NOTIFY applied)
    Q_PROPERTY(double rotation READ rotation NOTIFY applied)
    Q_PROPERTY(double scale READ scale NOTIFY applied)

public:
    explicit MotiondBinding(QObject *parent = nullptr);
    ~MotiondBinding() override;

    MotiondConnection *connection() const { return m_connection; }
    void setConnection(MotiondConnection *connection);
    QString element() const { return m_element; }
    void setElement(const QString &element);
    QQuickItem *target() const { return m_target; }
    void setTarget(QQuickItem *target);
    bool predicted() const { return m_predicted; }
    void setPredicted(bool predicted);
    bool size() const { return m_size; }
    void setSize(bool size);
    bool ready() const { return m_hasPosition; }
    QPointF position() const { return m_applied.position; }
    double rotation() const { return m_applied.rotation; }
    double scale() const { return m_applied.scale; }

    void classBegin() override {}
    void componentComplete() override;

signals:
    void connectionChanged();
    void elementChanged();
    void targetChanged();
    void predictedChanged();
    void sizeChanged();
    /// The target was moved (once per read of motiond's lines that changed the element).
    void applied();

private:
    /// The element's latest values, as motiond sent them.
    struct Latest {
        QPointF position;
        double rotation = 0;
        double scale = 1;
        QSizeF size;
        bool hasSize = false;
        bool hasPredictedPosition = false;
        QPointF predictedPosition;
        bool hasPredictedRotation = false;
        double predictedRotation = 0;
        bool hasPredictedScale = false;
        double predictedScale = 1;
    };
    struct Applied {
        QPointF position;
        double rotation = 0;
        double scale = 1;
    };

    void rebind();
    void unbind();
    void received(const QString &stream, const QVariant &value);
    void apply();
    void forgetPredictions();

    QPointer<MotiondConnection> m_connection;
    QString m_element;
    QPointer<QQuickItem> m_target;
    bool m_predicted = true;
    bool m_size = false;
    bool m_complete = false;

    int m_plainHold = 0;
    int m_predictedHold = 0;
    QList<QMetaObject::Connection> m_connections;
    Latest m_latest;
    bool m_hasPosition = false;
    bool m_dirty = false;
    Applied m_applied;
};
