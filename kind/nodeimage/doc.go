// Package nodeimage builds kind node images offline, for any Kubernetes
// version the Go module proxy has: version-stamped static Kubernetes
// binaries, the images kubeadm expects, and a Debian root filesystem with
// systemd, containerd, runc and CNI plugins plus the files kind's base
// image defines. Everything is cached by version and inputs under the user
// cache directory.
package nodeimage
