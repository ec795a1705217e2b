#include "glob.h"

namespace motiond {

QRegularExpression globExpression(const QString &pattern)
{
    QString expression;
    for (const QChar character : pattern) {
        if (character == QLatin1Char('*'))
            expression += QStringLiteral(".*");
        else if (character == QLatin1Char('?'))
            expression += QLatin1Char('.');
        else
            expression += QRegularExpression::escape(QString(character));
    }
    return QRegularExpression(QRegularExpression::anchoredPattern(expression),
                              QRegularExpression::DotMatchesEverythingOption);
}

bool globMatches(const QString &pattern, const QString &name)
{
    return globExpression(pattern).match(name).hasMatch();
}

} // namespace motiond
