// config/motiond.toml's card and photo follow motiond (MOTIOND_SOCKET, else
// /run/motiond/motiond.sock), with the module installed or from the build tree:
//     QML_IMPORT_PATH=.build/qt/qml /usr/lib/qt6/bin/qml clients/qt/examples/kiosk.qml
import QtQuick
import Motiond

Window {
    width: 1920; height: 1080      // [screen]: one window pixel is one screen pixel
    visible: true
    color: "#202020"

    MotiondConnection {
        id: motiond
        onError: (code, message, op) => console.warn(`motiond: ${op}: ${code}: ${message}`)
    }

    // The card: dragged and tossed, snapping left, middle or right.
    Rectangle {
        id: card
        objectName: "card"
        width: 520; height: 360; radius: 16
        color: motiond.connected ? "#3b82f6" : "#555"
        Text { anchors.centerIn: parent; text: "card"; color: "white"; font.pixelSize: 40 }
    }
    MotiondBinding { connection: motiond; element: "card"; target: card }
    // The photo: moved, turned and zoomed under the fingers.
    Rectangle { id: photo; width: 640; height: 420; color: "#d97706" }
    MotiondBinding { connection: motiond; element: "photo"; target: photo }
}
