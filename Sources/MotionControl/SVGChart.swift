import MotionCore

/// The frame of motionctl's charts (`spring --svg`, `predict --svg`): the page's size and
/// margins, where a value lands, and what every chart has: the white page with its title,
/// and two axes with five ticks each.
struct SVGChart {
    var width: Double
    var height: Double
    var margins: (left: Double, right: Double, top: Double, bottom: Double)
    /// The values at the axes' ends.
    var xRange: ClosedRange<Double>
    var yRange: ClosedRange<Double>

    /// Where the value `value` lands across the page, and up it.
    func x(_ value: Double) -> Double {
        margins.left + (value - xRange.lowerBound) / (xRange.upperBound - xRange.lowerBound) * (width - margins.left - margins.right)
    }

    func y(_ value: Double) -> Double {
        margins.top + (yRange.upperBound - value) / (yRange.upperBound - yRange.lowerBound) * (height - margins.top - margins.bottom)
    }

    /// A coordinate as SVG gets it.
    static func n(_ value: Double) -> String { formatted("%.2f", value) }

    /// The `<svg>` element's opening, the white page and the title.
    func opening(title: String) -> [String] {
        let n = Self.n
        return [
            ##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(height))" viewBox="0 0 \##(Int(width)) \##(Int(height))" font-family="sans-serif" font-size="12">"##,
            ##"<rect width="100%" height="100%" fill="white"/>"##,
            ##"<text x="\##(n(margins.left))" y="24" font-size="14">\##(Self.escaped(title))</text>"##,
        ]
    }

    /// The axes, with five ticks each labelled by `xTick` and `yTick`, and the x axis's name.
    func axes(xName: String, xTick: (Double) -> String, yTick: (Double) -> String) -> [String] {
        let n = Self.n, axisY = height - margins.bottom, left = margins.left
        var parts = [
            ##"<line x1="\##(n(left))" y1="\##(n(margins.top))" x2="\##(n(left))" y2="\##(n(axisY))" stroke="black"/>"##,
            ##"<line x1="\##(n(left))" y1="\##(n(axisY))" x2="\##(n(width - margins.right))" y2="\##(n(axisY))" stroke="black"/>"##,
        ]
        for i in 0...5 {
            let t = xRange.lowerBound + (xRange.upperBound - xRange.lowerBound) * Double(i) / 5
            parts.append(##"<line x1="\##(n(x(t)))" y1="\##(n(axisY))" x2="\##(n(x(t)))" y2="\##(n(axisY + 5))" stroke="black"/>"##)
            parts.append(##"<text x="\##(n(x(t)))" y="\##(n(axisY + 20))" text-anchor="middle">\##(xTick(t))</text>"##)
            let v = yRange.lowerBound + (yRange.upperBound - yRange.lowerBound) * Double(i) / 5
            parts.append(##"<line x1="\##(n(left - 5))" y1="\##(n(y(v)))" x2="\##(n(left))" y2="\##(n(y(v)))" stroke="black"/>"##)
            parts.append(##"<text x="\##(n(left - 8))" y="\##(n(y(v) + 4))" text-anchor="end">\##(yTick(v))</text>"##)
        }
        parts.append(##"<text x="\##(n((left + width - margins.right) / 2))" y="\##(n(height - 10))" text-anchor="middle">\##(xName)</text>"##)
        return parts
    }

    /// Text as SVG takes it.
    static func escaped(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }
}
