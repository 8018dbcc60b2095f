// Package runtimes holds the runtime profiles (what each runtime family
// declares it supports) and picks one for a runtime from its CRI Version.
// Adding a runtime is one YAML file in profiles/.
package runtimes
