// Package runtimes holds the runtime profiles (what each runtime family
// declares it supports) and picks one for a runtime from its CRI Version.
// Adding a runtime family is one YAML file in profiles/; the runtimes the
// suite itself runs (embedded, kind node images) are runtimes/catalog's.
package runtimes
