// Package dubsim runs the dubsim image with testcontainers-go, for tests
// that want the simulator as a real process in a container (the binary,
// listener and environment configuration a deployed test environment
// uses). Tests that only need a dubsim in the test process use package
// github.com/dubsim/dubsim/dubsimtest instead: no Docker, much faster.
//
// The package is named dubsim, like the testcontainers-go modules (redis,
// postgres, ...), so that it does not clash with package testcontainers:
//
//	import dubsim "github.com/dubsim/dubsim/contrib/testcontainers"
//
// The module depends on testcontainers-go only, not on the dubsim module:
// it talks to the container over HTTP. Client makes the control calls a
// container test needs most (health, clock, reset) and any other one with
// Client.Do; for the whole typed control API, give the container's URL
// and control token to dubsimtest.NewClient.
package dubsim

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

const (
	// DefaultImage is the image this repository builds: scripts/image
	// (buildah) and `docker build -t dubsim/dubsim:latest .` at its root
	// both tag it so. Nobody publishes it to a registry: build it on the
	// machine that runs the tests, or pass Run the name of an image you
	// built or pushed yourself.
	DefaultImage = "dubsim/dubsim:latest"
	// Port is the container port of every interface and of /_sim.
	Port = "8080/tcp"
	// HealthPath answers 200 once the simulator serves.
	HealthPath = "/_sim/health"
	// PlatformPrefix is the path under which dubsim serves the platform
	// interface alone: URL plus it is the platform's base URL, where no
	// request is routed to the studio.
	PlatformPrefix = "/platform"
	// StudioPrefix is the same for the studio interface.
	StudioPrefix = "/studio"
)

// Container is a running dubsim container.
type Container struct {
	testcontainers.Container
}

// Run starts a dubsim container from image, exposes Port and waits until
// HealthPath answers 200. image is any reference the container engine
// resolves ("ghcr.io/you/dubsim:v1.2.3", say); "" is DefaultImage.
// Simulated time is frozen (DUBSIM_TIME_SCALE=0), as with dubsimtest:
// tests move it with Client.Advance; WithTimeScale changes that. opts come
// last and can change anything (testcontainers.WithEnv for other DUBSIM_*
// settings, say).
//
// As with every testcontainers-go module, a container is returned also
// with an error when it was created, so that the caller can terminate it
// (testcontainers.CleanupContainer does both).
func Run(ctx context.Context, image string, opts ...testcontainers.ContainerCustomizer) (*Container, error) {
	all := append([]testcontainers.ContainerCustomizer{
		testcontainers.WithExposedPorts(Port),
		testcontainers.WithEnv(map[string]string{"DUBSIM_TIME_SCALE": "0"}),
		testcontainers.WithWaitStrategy(wait.ForHTTP(HealthPath).WithPort(Port)),
	}, opts...)
	ctr, err := testcontainers.Run(ctx, cmp.Or(image, DefaultImage), all...)
	var c *Container
	if ctr != nil {
		c = &Container{Container: ctr}
	}
	if err != nil {
		return c, fmt.Errorf("run dubsim: %w", err)
	}
	return c, nil
}

// WithTimeScale sets the speed of simulated time (DUBSIM_TIME_SCALE): 0
// freezes it (the default of Run), 1 is real time.
func WithTimeScale(scale float64) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(map[string]string{"DUBSIM_TIME_SCALE": strconv.FormatFloat(scale, 'g', -1, 64)})
}

// WithSeed sets the seed of generated ids and content (DUBSIM_SEED).
func WithSeed(seed uint64) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(map[string]string{"DUBSIM_SEED": strconv.FormatUint(seed, 10)})
}

// WithControlToken starts dubsim with a control token
// (DUBSIM_CONTROL_TOKEN): every control call must then carry it, from any
// host. Container.Client passes it.
func WithControlToken(token string) testcontainers.CustomizeRequestOption {
	return testcontainers.WithEnv(map[string]string{"DUBSIM_CONTROL_TOKEN": token})
}

// URL returns the base URL of the simulator as seen from the host, such as
// "http://localhost:32768": the platform and studio APIs and /_sim.
func (c *Container) URL(ctx context.Context) (string, error) {
	return c.PortEndpoint(ctx, Port, "http")
}

// PlatformURL returns the base URL of the platform interface alone, as
// seen from the host: URL plus PlatformPrefix.
func (c *Container) PlatformURL(ctx context.Context) (string, error) {
	u, err := c.URL(ctx)
	return u + PlatformPrefix, err
}

// StudioURL returns the base URL of the studio interface alone, as seen
// from the host: URL plus StudioPrefix.
func (c *Container) StudioURL(ctx context.Context) (string, error) {
	u, err := c.URL(ctx)
	return u + StudioPrefix, err
}

// ControlToken returns the container's control token
// (DUBSIM_CONTROL_TOKEN, set by WithControlToken or WithEnv), "" when it
// has none.
func (c *Container) ControlToken(ctx context.Context) (string, error) {
	info, err := c.Inspect(ctx)
	if err != nil {
		return "", fmt.Errorf("inspect dubsim: %w", err)
	}
	token := ""
	if info.Config != nil {
		for _, kv := range info.Config.Env {
			if t, ok := strings.CutPrefix(kv, "DUBSIM_CONTROL_TOKEN="); ok {
				token = t
			}
		}
	}
	return token, nil
}

// Client returns a client of the container's control API, with the
// container's control token when it has one.
func (c *Container) Client(ctx context.Context) (*Client, error) {
	u, err := c.URL(ctx)
	if err != nil {
		return nil, err
	}
	token, err := c.ControlToken(ctx)
	if err != nil {
		return nil, err
	}
	return &Client{BaseURL: u, Token: token}, nil
}
