// Docker cannot run on the build machines, so these tests check what can be checked
// without it: the compose file parses and wires the pieces together, and the image
// runs as non-root with a health check.
package deploy

import (
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

type compose struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Environment map[string]string `yaml:"environment"`
		Ports       []string          `yaml:"ports"`
		Volumes     []string          `yaml:"volumes"`
		DependsOn   any               `yaml:"depends_on"`
		Build       *struct {
			Context    string `yaml:"context"`
			Dockerfile string `yaml:"dockerfile"`
		} `yaml:"build"`
	} `yaml:"services"`
}

func TestComposeParses(t *testing.T) {
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"authcore", "postgres", "prometheus", "grafana"} {
		if _, ok := c.Services[s]; !ok {
			t.Fatalf("no service %q", s)
		}
	}
	ac := c.Services["authcore"]
	if !strings.HasPrefix(ac.Environment["AUTHCORE_DATABASE_URL"], "postgres://") {
		t.Error("authcore does not use the postgres service")
	}
	if ac.Environment["AUTHCORE_PUBLIC_URL"] == "" {
		t.Error("authcore needs AUTHCORE_PUBLIC_URL: without it mailed links name localhost")
	}
	if ac.Environment["AUTHCORE_MASTER_KEY"] == "" {
		t.Error("authcore on PostgreSQL needs AUTHCORE_MASTER_KEY")
	}
	if g := strings.Join(c.Services["grafana"].Volumes, " "); !strings.Contains(g, "./grafana/authcore.json:") || !strings.Contains(g, "./grafana/provisioning:") {
		t.Errorf("grafana is not provisioned with the dashboard: %s", g)
	}
	if p := strings.Join(c.Services["prometheus"].Volumes, " "); !strings.Contains(p, "./prometheus/alerts.yml:") {
		t.Errorf("prometheus does not load the alert rules: %s", p)
	}
	if ac.Build == nil || ac.Build.Dockerfile != "deploy/Dockerfile" {
		t.Error("authcore is not built from deploy/Dockerfile")
	}
	prom, err := os.ReadFile("prometheus/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		ScrapeConfigs []struct {
			MetricsPath   string `yaml:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(prom, &p); err != nil {
		t.Fatal(err)
	}
	port := strings.TrimPrefix(ac.Environment["AUTHCORE_METRICS_ADDR"], ":")
	if len(p.ScrapeConfigs) == 0 || p.ScrapeConfigs[0].MetricsPath != "/metrics" ||
		len(p.ScrapeConfigs[0].StaticConfigs) == 0 || p.ScrapeConfigs[0].StaticConfigs[0].Targets[0] != "authcore:"+port {
		t.Errorf("prometheus does not scrape authcore's metrics listener: %+v", p)
	}
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	d := string(b)
	for _, want := range []string{"CGO_ENABLED=0", "USER nonroot", "HEALTHCHECK", `"healthcheck"`, "./cmd/authcore"} {
		if !strings.Contains(d, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}
