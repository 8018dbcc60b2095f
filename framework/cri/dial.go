package cri

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// maxMsgSize matches the kubelet's: large ListContainers answers fit.
const maxMsgSize = 16 * 1024 * 1024

// Endpoint is a parsed CRI endpoint: unix:///path or npipe:////./pipe/name.
type Endpoint struct {
	Scheme string
	Path   string
	Raw    string
}

// ParseEndpoint accepts the forms the kubelet and crictl accept: unix://,
// npipe:// and, for convenience, a bare absolute socket path.
func ParseEndpoint(raw string) (Endpoint, error) {
	if raw == "" {
		return Endpoint{}, fmt.Errorf("empty CRI endpoint")
	}
	if strings.HasPrefix(raw, "/") {
		return Endpoint{Scheme: "unix", Path: raw, Raw: "unix://" + raw}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return Endpoint{}, fmt.Errorf("CRI endpoint %q: %v", raw, err)
	}
	switch u.Scheme {
	case "unix":
		p := u.Path
		if u.Host != "" { // unix://relative/path
			p = u.Host + u.Path
		}
		if p == "" {
			return Endpoint{}, fmt.Errorf("CRI endpoint %q: no socket path", raw)
		}
		return Endpoint{Scheme: "unix", Path: p, Raw: raw}, nil
	case "npipe":
		// npipe:////./pipe/name: the path is everything after "npipe://".
		p := strings.TrimPrefix(raw, "npipe://")
		p = strings.ReplaceAll(p, "/", `\`)
		if !strings.HasPrefix(p, `\\`) {
			return Endpoint{}, fmt.Errorf("CRI endpoint %q: want npipe:////./pipe/<name>", raw)
		}
		return Endpoint{Scheme: "npipe", Path: p, Raw: raw}, nil
	default:
		return Endpoint{}, fmt.Errorf("CRI endpoint %q: unknown scheme %q (want unix:// or npipe://)", raw, u.Scheme)
	}
}

// Conn is a connection to one CRI endpoint with both services on it.
type Conn struct {
	*grpc.ClientConn
	Runtime runtimeapi.RuntimeServiceClient
	Image   runtimeapi.ImageServiceClient
}

// Dial connects to the endpoint. It does not block: use Probe to check that
// a runtime answers.
func Dial(endpoint string) (*Conn, error) {
	ep, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	dialer, err := contextDialer(ep)
	if err != nil {
		return nil, err
	}
	cc, err := grpc.NewClient("passthrough:///"+ep.Raw,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(dialer),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(maxMsgSize), grpc.MaxCallSendMsgSize(maxMsgSize)),
	)
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %s: %w", endpoint, err)
	}
	return &Conn{ClientConn: cc, Runtime: runtimeapi.NewRuntimeServiceClient(cc), Image: runtimeapi.NewImageServiceClient(cc)}, nil
}

// Probe checks that the endpoint exists and a CRI runtime answers Version.
func Probe(ctx context.Context, endpoint string) (*runtimeapi.VersionResponse, error) {
	ep, err := ParseEndpoint(endpoint)
	if err != nil {
		return nil, err
	}
	if err := checkExists(ep); err != nil {
		return nil, err
	}
	conn, err := Dial(endpoint)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	v, err := conn.Runtime.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		return nil, fmt.Errorf("CRI endpoint %s does not answer Version: %s", endpoint, StatusText(err))
	}
	return v, nil
}
