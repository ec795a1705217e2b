// A protocol glob (docs/protocol.md, Requests and replies): `*` any characters, dots
// included, `?` any one, nothing else special. The connection uses it to tell which values
// a subscriber asked for, and whether an optional pattern names any stream motiond has.
#pragma once

#include <QRegularExpression>
#include <QString>

namespace motiond {

/// The regular expression matching exactly the names `pattern` matches.
QRegularExpression globExpression(const QString &pattern);

/// Whether `name` is one of the names `pattern` matches.
bool globMatches(const QString &pattern, const QString &name);

} // namespace motiond
