package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// manifests decodes every resource the kustomization lists strictly into its Kubernetes
// API type: an unknown or misspelt field fails, as the API server would refuse it.
func manifests(t *testing.T) map[string]any {
	t.Helper()
	var k struct {
		Resources []string `json:"resources"`
	}
	b, err := os.ReadFile("kubernetes/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &k); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, file := range k.Resources {
		b, err := os.ReadFile(filepath.Join("kubernetes", file))
		if err != nil {
			t.Fatal(err)
		}
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal(b, &tm); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var obj any
		switch tm.Kind {
		case "Deployment":
			obj = &appsv1.Deployment{}
		case "Service":
			obj = &corev1.Service{}
		case "ServiceAccount":
			obj = &corev1.ServiceAccount{}
		case "PodDisruptionBudget":
			obj = &policyv1.PodDisruptionBudget{}
		case "HorizontalPodAutoscaler":
			obj = &autoscalingv2.HorizontalPodAutoscaler{}
		case "NetworkPolicy":
			obj = &networkingv1.NetworkPolicy{}
		case "Job":
			obj = &batchv1.Job{}
		default:
			t.Fatalf("%s: unexpected kind %q", file, tm.Kind)
		}
		if err := yaml.UnmarshalStrict(b, obj); err != nil {
			t.Fatalf("%s does not decode strictly as %s: %v", file, tm.Kind, err)
		}
		if _, dup := out[tm.Kind]; dup {
			t.Fatalf("two %s resources", tm.Kind)
		}
		out[tm.Kind] = obj
	}
	return out
}

func TestKubernetesBase(t *testing.T) {
	m := manifests(t)
	for _, kind := range []string{"Deployment", "Service", "PodDisruptionBudget", "HorizontalPodAutoscaler", "NetworkPolicy", "Job"} {
		if m[kind] == nil {
			t.Fatalf("no %s", kind)
		}
	}
	d := m["Deployment"].(*appsv1.Deployment)
	pod := d.Spec.Template.Spec

	t.Run("at least two replicas, kept during disruptions and scaling", func(t *testing.T) {
		if d.Spec.Replicas == nil || *d.Spec.Replicas < 2 {
			t.Fatal("fewer than 2 replicas")
		}
		hpa := m["HorizontalPodAutoscaler"].(*autoscalingv2.HorizontalPodAutoscaler)
		if hpa.Spec.MinReplicas == nil || *hpa.Spec.MinReplicas < 2 || hpa.Spec.ScaleTargetRef.Name != d.Name || hpa.Spec.ScaleTargetRef.Kind != "Deployment" {
			t.Fatalf("hpa %+v", hpa.Spec)
		}
		pdb := m["PodDisruptionBudget"].(*policyv1.PodDisruptionBudget)
		if pdb.Spec.MinAvailable == nil || pdb.Spec.MinAvailable.IntValue() < 1 || !selects(pdb.Spec.Selector, d.Spec.Template.Labels) {
			t.Fatal("the PDB does not keep a pod of the Deployment")
		}
		svc := m["Service"].(*corev1.Service)
		if !selects(&metav1.LabelSelector{MatchLabels: svc.Spec.Selector}, d.Spec.Template.Labels) {
			t.Fatal("the Service selects no pod of the Deployment")
		}
	})
	t.Run("non-root, read-only root filesystem, writable emptyDirs only", func(t *testing.T) {
		for _, spec := range []corev1.PodSpec{pod, m["Job"].(*batchv1.Job).Spec.Template.Spec} {
			if spec.SecurityContext == nil || spec.SecurityContext.RunAsNonRoot == nil || !*spec.SecurityContext.RunAsNonRoot {
				t.Fatal("pod may run as root")
			}
			for _, c := range spec.Containers {
				sc := c.SecurityContext
				if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
					t.Fatalf("%s: root filesystem writable or privilege escalation allowed", c.Name)
				}
				if c.Resources.Requests.Cpu().IsZero() || c.Resources.Limits.Memory().IsZero() {
					t.Fatalf("%s: no resource requests or limits", c.Name)
				}
			}
		}
		for _, v := range pod.Volumes {
			if v.EmptyDir == nil {
				t.Fatalf("volume %s is not an emptyDir", v.Name)
			}
		}
		dataDir := env(pod.Containers[0], "AUTHCORE_DATA_DIR").Value
		mounted := false
		for _, vm := range pod.Containers[0].VolumeMounts {
			mounted = mounted || vm.MountPath == dataDir
		}
		if !mounted {
			t.Fatalf("AUTHCORE_DATA_DIR %q is not on a writable volume", dataDir)
		}
	})
	t.Run("probes: liveness on /healthz, readiness on /readyz", func(t *testing.T) {
		c := pod.Containers[0]
		if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
			t.Fatal("liveness")
		}
		if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
			t.Fatal("readiness")
		}
	})
	t.Run("metrics on their own port", func(t *testing.T) {
		c := pod.Containers[0]
		addr := env(c, "AUTHCORE_METRICS_ADDR").Value
		port := false
		for _, p := range c.Ports {
			port = port || (p.Name == "metrics" && ":"+itoa(p.ContainerPort) == addr)
		}
		if addr == "" || !port || addr == env(c, "AUTHCORE_ADDR").Value {
			t.Fatalf("AUTHCORE_METRICS_ADDR %q is not a port of its own", addr)
		}
	})
	t.Run("secrets come from a Secret, never a value", func(t *testing.T) {
		for _, c := range append(pod.Containers, m["Job"].(*batchv1.Job).Spec.Template.Spec.Containers...) {
			for _, e := range c.Env {
				if strings.Contains(e.Name, "MASTER_KEY") || strings.Contains(e.Name, "DATABASE_URL") {
					if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
						t.Fatalf("%s: %s is not a Secret reference", c.Name, e.Name)
					}
				}
			}
		}
		if u := env(pod.Containers[0], "AUTHCORE_PUBLIC_URL").Value; !strings.HasPrefix(u, "https://") {
			t.Fatalf("AUTHCORE_PUBLIC_URL is %q, want the https URL clients use", u)
		}
		if env(pod.Containers[0], "AUTHCORE_MASTER_KEY").ValueFrom == nil || env(pod.Containers[0], "AUTHCORE_DATABASE_URL").ValueFrom == nil {
			t.Fatal("the server lacks its store or master key")
		}
	})
	t.Run("the migration Job runs authcore migrate", func(t *testing.T) {
		j := m["Job"].(*batchv1.Job)
		if args := j.Spec.Template.Spec.Containers[0].Args; len(args) != 1 || args[0] != "migrate" {
			t.Fatalf("args %v", args)
		}
	})
	t.Run("the NetworkPolicy covers the pods and both directions", func(t *testing.T) {
		np := m["NetworkPolicy"].(*networkingv1.NetworkPolicy)
		if !selects(&np.Spec.PodSelector, d.Spec.Template.Labels) || len(np.Spec.PolicyTypes) != 2 || len(np.Spec.Egress) == 0 {
			t.Fatalf("%+v", np.Spec)
		}
	})
}

// If kubectl is installed, the kustomization must also build.
func TestKustomizeBuilds(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed; the strict decoding above still checks every manifest")
	}
	if out, err := exec.Command(kubectl, "kustomize", "kubernetes").CombinedOutput(); err != nil {
		t.Fatalf("kubectl kustomize: %v\n%s", err, out)
	}
}

func env(c corev1.Container, name string) corev1.EnvVar {
	for _, e := range c.Env {
		if e.Name == name {
			return e
		}
	}
	return corev1.EnvVar{}
}

func selects(s *metav1.LabelSelector, labels map[string]string) bool {
	if s == nil || len(s.MatchLabels) == 0 {
		return false
	}
	for k, v := range s.MatchLabels {
		if labels[k] != v {
			return false
		}
	}
	return true
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

// The split overlay (SPEC §18) builds into two Deployments of one image that each select
// only their own pods, together serve every module, both serve session, and an Ingress
// that sends each path to the half serving it.
func TestSplitOverlay(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl is not installed")
	}
	out, err := exec.Command(kubectl, "kustomize", "overlays/split").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize overlays/split: %v\n%s", err, out)
	}
	deployments := map[string]*appsv1.Deployment{}
	services := map[string]*corev1.Service{}
	var ingress *networkingv1.Ingress
	for _, doc := range strings.Split(string(out), "\n---\n") {
		var tm metav1.TypeMeta
		if err := yaml.Unmarshal([]byte(doc), &tm); err != nil {
			t.Fatal(err)
		}
		switch tm.Kind {
		case "Deployment":
			d := &appsv1.Deployment{}
			if err := yaml.UnmarshalStrict([]byte(doc), d); err != nil {
				t.Fatal(err)
			}
			deployments[d.Name] = d
		case "Service":
			s := &corev1.Service{}
			if err := yaml.UnmarshalStrict([]byte(doc), s); err != nil {
				t.Fatal(err)
			}
			services[s.Name] = s
		case "Ingress":
			ingress = &networkingv1.Ingress{}
			if err := yaml.UnmarshalStrict([]byte(doc), ingress); err != nil {
				t.Fatal(err)
			}
		}
	}
	signin, verify := deployments["authcore-signin"], deployments["authcore-verify"]
	if len(deployments) != 2 || signin == nil || verify == nil || ingress == nil {
		t.Fatalf("want Deployments authcore-signin and authcore-verify and an Ingress, got %d Deployments", len(deployments))
	}
	served := map[string]map[string]bool{}
	for name, d := range deployments {
		c := d.Spec.Template.Spec.Containers[0]
		if c.Image != signin.Spec.Template.Spec.Containers[0].Image {
			t.Errorf("%s runs another image", name)
		}
		served[name] = map[string]bool{}
		for _, m := range strings.Split(env(c, "AUTHCORE_MODULES").Value, ",") {
			served[name][m] = true
		}
		// Its Service selects its pods and not the other half's.
		for other, od := range deployments {
			if got := selects(&metav1.LabelSelector{MatchLabels: services[name].Spec.Selector}, od.Spec.Template.Labels); got != (other == name) {
				t.Errorf("Service %s selects %s's pods: %v", name, other, got)
			}
		}
	}
	modules, _ := filepath.Glob("../modules/*")
	for _, dir := range modules {
		m := filepath.Base(dir)
		if !served["authcore-signin"][m] && !served["authcore-verify"][m] {
			t.Errorf("no half serves module %s", m)
		}
	}
	if !served["authcore-signin"]["account"] || served["authcore-verify"]["account"] || !served["authcore-signin"]["session"] || !served["authcore-verify"]["session"] {
		t.Errorf("account must be the sign-in half's alone, session both halves': %v", served)
	}
	route := func(path string) string {
		best, backend := -1, ""
		for _, p := range ingress.Spec.Rules[0].HTTP.Paths {
			exact := p.PathType != nil && *p.PathType == networkingv1.PathTypeExact
			if (exact && path == p.Path) || (!exact && (path == p.Path || strings.HasPrefix(path, strings.TrimSuffix(p.Path, "/")+"/"))) {
				if n := len(p.Path); n > best || exact {
					best, backend = n, p.Backend.Service.Name
				}
			}
		}
		return backend
	}
	for path, want := range map[string]string{
		"/v1/auth-core/signin": "authcore-signin", "/v1/auth-core/signup": "authcore-signin", "/v1/auth-core/mfa/verify": "authcore-signin",
		"/v1/auth-core/password/reset": "authcore-signin", "/console/assets/app.js": "authcore-signin", "/": "authcore-signin",
		"/v1/auth-core/providers/idp_x/callback": "authcore-signin", "/v1/auth-core/email/signin": "authcore-signin",
		"/v1/auth-core/identities": "authcore-signin", "/v1/projects/prj_x/auth/providers": "authcore-verify",
		"/v1/auth-core/ai/me": "authcore-verify", "/v1/service-badges/me": "authcore-verify", "/v1/s3/verify": "authcore-verify",
		"/v1/auth-core/session/me": "authcore-verify", "/v1/oauth/token": "authcore-verify", "/v1/auth-core/projects": "authcore-verify",
	} {
		if got := route(path); got != want {
			t.Errorf("the Ingress sends %s to %q, want %s", path, got, want)
		}
	}
}
