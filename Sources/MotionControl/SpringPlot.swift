import FoundationEssentials
import MotionConfiguration
import MotionCore

/// Draws a spring's trajectory as SVG: value over time, the destination as a dashed line,
/// the rest time as a vertical line. Designers would rather look than read.
struct SpringPlot {
    let trajectory: SpringTrajectory
    let configuration: SpringConfiguration
    let destination: Double

    private let width = 800.0, height = 420.0
    private let left = 70.0, right = 30.0, top = 50.0, bottom = 50.0

    func svg() -> String {
        let samples = trajectory.samples
        let endTime = Swift.max(samples.last?.t ?? 0, trajectory.restTime ?? 0, 1e-3)
        let values = samples.map(\.value) + [destination]
        var low = values.min() ?? 0, high = values.max() ?? 1
        if high - low < 1e-12 { low -= 0.5; high += 0.5 }
        let margin = (high - low) * 0.08
        low -= margin
        high += margin

        let chart = SVGChart(width: width, height: height, margins: (left, right, top, bottom), xRange: 0...endTime, yRange: low...high)
        let x = chart.x, y = chart.y, n = SVGChart.n
        let axisY = height - bottom
        var parts = chart.opening(title: "spring: tension \(format(configuration.tension)), friction \(format(configuration.friction)), mass \(format(configuration.mass)) (damping ratio \(formatted("%.3f", configuration.dampingRatio)))")
        parts += chart.axes(xName: "time (s)", xTick: { formatted("%.3g", $0) }, yTick: { formatted("%.3g", $0) })

        // Destination, rest time and the curve.
        parts.append(##"<line x1="\##(n(left))" y1="\##(n(y(destination)))" x2="\##(n(width - right))" y2="\##(n(y(destination)))" stroke="#888" stroke-dasharray="6 4"/>"##)
        parts.append(##"<text x="\##(n(width - right))" y="\##(n(y(destination) - 6))" text-anchor="end" fill="#555">destination \##(format(destination))</text>"##)
        if let rest = trajectory.restTime {
            parts.append(##"<line x1="\##(n(x(rest)))" y1="\##(n(top))" x2="\##(n(x(rest)))" y2="\##(n(axisY))" stroke="#c33" stroke-dasharray="3 3"/>"##)
            parts.append(##"<text x="\##(n(x(rest) - 4))" y="\##(n(top + 12))" text-anchor="end" fill="#c33">at rest \##(formatted("%.3f", rest)) s</text>"##)
        }
        let points = samples.map { "\(n(x($0.t))),\(n(y($0.value)))" }.joined(separator: " ")
        parts.append(##"<polyline points="\##(points)" fill="none" stroke="#1565c0" stroke-width="2"/>"##)
        for sample in samples where samples.count <= 400 {
            parts.append(##"<circle cx="\##(n(x(sample.t)))" cy="\##(n(y(sample.value)))" r="2" fill="#1565c0"/>"##)
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    private func format(_ value: Double) -> String { formatted("%g", value) }
}
