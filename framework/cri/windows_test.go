package cri

import (
	"strings"
	"testing"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// On Windows the suite sends what the kubelet sends there: Windows configs
// with the network mode as the only namespace option, never Linux ones; a
// debug container's target is left out as the kubelet leaves it out, and
// what Windows has no option for cannot be asked for at all.
func TestWindowsConfigs(t *testing.T) {
	unknown := runtimeapi.NamespaceMode(42)
	for _, c := range []struct {
		opts    SandboxOptions
		network runtimeapi.NamespaceMode
		why     string
	}{
		{SandboxOptions{}, runtimeapi.NamespaceMode_POD, ""},
		{SandboxOptions{Network: unknown}, unknown, ""},
		{SandboxOptions{Network: runtimeapi.NamespaceMode_NODE}, runtimeapi.NamespaceMode_NODE, ""},
		{SandboxOptions{PID: runtimeapi.NamespaceMode_CONTAINER}, runtimeapi.NamespaceMode_POD, ""},
		{SandboxOptions{SharePID: true}, 0, "no PID namespace option"},
		{SandboxOptions{PID: unknown}, 0, "no PID namespace option"},
		{SandboxOptions{IPC: runtimeapi.NamespaceMode_NODE}, 0, "no IPC namespace option"},
		{SandboxOptions{Userns: PodUserns(100000, 65536)}, 0, "no user namespace option"},
	} {
		cfg, why := WindowsSandboxConfig(c.opts)
		switch {
		case c.why != "" && !strings.Contains(why, c.why):
			t.Errorf("%+v: %q, want it refused: %q", c.opts, why, c.why)
		case c.why == "" && (why != "" || cfg.SecurityContext.NamespaceOptions.Network != c.network):
			t.Errorf("%+v: %v %q, want network %s", c.opts, cfg, why, c.network)
		}
	}
	target, pod := runtimeapi.NamespaceMode_TARGET, runtimeapi.NamespaceMode_POD
	for _, c := range []struct {
		opts         ContainerOptions
		notSent, why string
	}{
		{ContainerOptions{}, "", ""},
		{ContainerOptions{PID: &target, TargetID: "abc"}, `PID TARGET with target_id "abc" not sent`, ""},
		{ContainerOptions{PID: &pod}, "", "no PID namespace option"},
		{ContainerOptions{TargetID: "abc"}, "", "no target_id"},
		{ContainerOptions{Network: unknown}, "", "no network namespace option"},
		{ContainerOptions{IPC: runtimeapi.NamespaceMode_NODE}, "", "no IPC namespace option"},
		{ContainerOptions{AddCaps: []string{"SYS_PTRACE"}}, "", "capabilities"},
		{ContainerOptions{Userns: NodeUserns()}, "", "no user namespace option"},
	} {
		cfg, notSent, why := WindowsContainerConfig(c.opts)
		if !strings.Contains(why, c.why) || (c.why == "") != (why == "") || !strings.Contains(notSent, c.notSent) || (c.notSent == "") != (notSent == "") {
			t.Errorf("%+v: notSent %q, why %q; want %q, %q", c.opts, notSent, why, c.notSent, c.why)
		}
		if why == "" && (cfg == nil || cfg.SecurityContext == nil) {
			t.Errorf("%+v: no Windows config", c.opts)
		}
	}
	f := &Framework{Session: &Session{OS: "windows"}, Token: "t"}
	cfg, notSent := f.containerConfig(ContainerOptions{Name: "debug", PID: &target, TargetID: "abc"})
	if cfg.Linux != nil || cfg.Windows == nil || notSent == "" {
		t.Errorf("a Windows node gets no Linux config: %v (%q)", cfg, notSent)
	}
	f.OS = "linux"
	if cfg, _ := f.containerConfig(ContainerOptions{Name: "debug", PID: &target, TargetID: "abc"}); cfg.Windows != nil || cfg.Linux.SecurityContext.NamespaceOptions.TargetId != "abc" {
		t.Errorf("the Linux path is unchanged: %v", cfg)
	}
}

func TestTools(t *testing.T) {
	bb, nano := ToolsFor(""), ToolsFor("nanoserver")
	if bb.HTTPGet("u")[0] != "wget" || nano.HTTPGet("u")[0] != "curl.exe" || !strings.Contains(strings.Join(nano.Sleep("m-1"), " "), "m-1") {
		t.Error("commands by flavour")
	}
	ipconfig := "\r\nWindows IP Configuration\r\n\r\nEthernet adapter vEthernet (abc):\r\n\r\n   Connection-specific DNS Suffix  . : \r\n   Link-local IPv6 Address . . . . . : fe80::1%17\r\n   IPv4 Address. . . . . . . . . . . : 10.244.1.7\r\n   Subnet Mask . . . . . . . . . . . : 255.255.255.0\r\n"
	if !nano.HasAddress(ipconfig, "10.244.1.7") || nano.HasAddress(ipconfig, "10.244.1.70") || nano.HasAddress(ipconfig, "") {
		t.Error("ipconfig addresses")
	}
	if !bb.HasAddress("2: eth0    inet 198.18.0.5/16 brd 198.18.255.255 scope global eth0", "198.18.0.5") || bb.HasAddress("inet 198.18.0.50/16", "198.18.0.5") {
		t.Error("ip addresses")
	}
	ps := "PID   USER     COMMAND\n    1 root     sh -c sleep 86400 & wait ectest-debug-x\n   7 root     /target --token=x-target --listen=:8080\n"
	if !bb.ShowsProcess(ps, "--token=x-target") || bb.ShowsProcess(ps, "--token=y-target") {
		t.Error("busybox process visibility")
	}
	tasklist := "\"cmd.exe\",\"1234\",\"Services\",\"0\",\"2,000 K\"\r\n\"PING.EXE\",\"2345\",\"Services\",\"0\",\"3,000 K\"\r\n"
	if nano.ShowsProcess(tasklist, "x") || !nano.ShowsProcess(tasklist+"\"target.exe\",\"9\",\"Services\",\"0\",\"9 K\"\r\n", "x") {
		t.Error("tasklist process visibility")
	}
}
