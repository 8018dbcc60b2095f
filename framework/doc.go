// Package framework is the core every suite uses: the one typed
// configuration (flags, validated once before any spec runs), the label
// registry and the named timeouts. It imports none of its subpackages but
// the leaf capability package (whose names are labels); they import it.
package framework
