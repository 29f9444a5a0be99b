package builtin

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"platd/config"
	"platd/server/apierr"
	"platd/server/registry"
)

// Waiting for a namespace's default service account. Its controller
// creates it just after the namespace, so a client that creates a
// namespace and at once a pod in it finds none yet; as upstream, the
// default account is looked up again a few times before the pod is
// refused, and any other account only once. The wait is bounded (about
// 1.5s at most) so a namespace whose account never comes answers soon.
const (
	defaultAccountAttempts = 10
	// accountRetryBase and accountRetryJitter make the pause between two
	// attempts: base plus up to jitter, drawn once per request, so that
	// many waiting creates do not retry in step.
	accountRetryBase   = 100 * time.Millisecond
	accountRetryJitter = 100 * time.Millisecond
)

// tokenExpirationSeconds is the lifetime the projected token of the
// service account volume asks for: an hour and seven seconds, the value
// upstream recognizes as its own request.
const tokenExpirationSeconds = int64(3607)

// serviceAccountAdmission runs a new pod as a service account, as
// upstream's ServiceAccount admission plugin: the pod names one or gets
// "default"; the account must exist; unless the pod or the account turns
// automounting off, every container and init container gets the account's
// token, the root CA bundle and the namespace in a projected volume; a pod
// without image pull secrets gets the account's; and an account annotated
// to enforce mountable secrets limits the secrets the pod references to
// its own. Mirror pods are left as they are but may reference no account
// and no secret. Updates are not its concern: validation keeps the account
// of a pod fixed.
type serviceAccountAdmission struct {
	accounts *registry.Descriptor
	// mirrorAnnotation marks a mirror pod, enforceAnnotation an account
	// that limits the secrets its pods reference.
	mirrorAnnotation, enforceAnnotation string
	// mountPath is where the volume is mounted, volumePrefix starts its
	// name.
	mountPath, volumePrefix string
	// projected is the projected source of the token volume, the same for
	// every pod: each pod gets a deep copy of it (projectedSource), which
	// is then its own to change. It is never written.
	projected map[string]any
	// mountPathValue is mountPath as a member value, made once: a string
	// member shares its bytes, so each pod's mounts need not box it again.
	mountPathValue any
	// retryInterval returns the pause between two lookups of the default
	// account.
	retryInterval func() time.Duration
}

func newServiceAccountAdmission(b config.Brand, accounts *registry.Descriptor) serviceAccountAdmission {
	return serviceAccountAdmission{
		accounts:          accounts,
		mirrorAnnotation:  b.Label("config.mirror"),
		enforceAnnotation: b.Label("enforce-mountable-secrets"),
		mountPath:         b.ServiceAccountMountPath(),
		volumePrefix:      b.APIAccessVolume,
		projected:         tokenProjection(b.RootCAConfigMap),
		mountPathValue:    b.ServiceAccountMountPath(),
		retryInterval: func() time.Duration {
			return accountRetryBase + rand.N(accountRetryJitter)
		},
	}
}

// tokenProjection is the projected source of the token volume: the
// account's token, the root CA bundle from the ConfigMap rootCA, and the
// pod's namespace. Its defaultMode is set here because the defaults of a
// decoded pod are applied before admission adds the volume.
func tokenProjection(rootCA string) map[string]any {
	return map[string]any{
		"defaultMode": defaultFileMode,
		"sources": []any{
			map[string]any{"serviceAccountToken": map[string]any{
				"expirationSeconds": tokenExpirationSeconds, "path": "token",
			}},
			map[string]any{"configMap": map[string]any{
				"name":  rootCA,
				"items": []any{map[string]any{"key": "ca.crt", "path": "ca.crt"}},
			}},
			map[string]any{"downwardAPI": map[string]any{
				"items": []any{map[string]any{
					"path":     "namespace",
					"fieldRef": map[string]any{"apiVersion": "v1", "fieldPath": "metadata.namespace"},
				}},
			}},
		},
	}
}

// projectedSource is a copy of the token volume's projected source that
// the caller owns.
func (a serviceAccountAdmission) projectedSource() map[string]any {
	return deepCopyMap(a.projected)
}

// admitPod applies the plugin to a pod being created.
func (a serviceAccountAdmission) admitPod(ctx context.Context, l registry.Lookup, obj, old registry.Object) error {
	if old != nil {
		return nil
	}
	spec := child(obj, "spec")
	// The deprecated serviceAccount member names the account as well.
	syncServiceAccount(spec)
	if _, mirror := mapOf(mapOf(obj["metadata"])["annotations"])[a.mirrorAnnotation]; mirror {
		return checkMirrorPod(spec)
	}
	if strOf(spec["serviceAccountName"]) == "" {
		spec["serviceAccountName"] = defaultServiceAccount
	}
	syncServiceAccount(spec)
	ns, name := str(obj, "metadata", "namespace"), strOf(spec["serviceAccountName"])
	sa, err := a.account(ctx, l, ns, name)
	if err != nil {
		return &registry.Denial{Reason: fmt.Sprintf("error looking up service account %s/%s: %v", ns, name, err)}
	}
	if automount(spec, sa) {
		a.mountToken(spec)
	}
	if len(listOf(spec["imagePullSecrets"])) == 0 {
		var refs []any
		for _, ref := range mapsOf(sa["imagePullSecrets"]) {
			refs = append(refs, map[string]any{"name": strOf(ref["name"])})
		}
		if refs != nil {
			spec["imagePullSecrets"] = refs
		}
	}
	// An account without the annotation (most) is not parsed: a failed
	// parse makes an error value.
	if enforce := str(sa, "metadata", "annotations", a.enforceAnnotation); enforce != "" {
		if on, _ := strconv.ParseBool(enforce); on {
			if reason := limitSecretReferences(spec, sa); reason != "" {
				return &registry.Denial{Reason: reason}
			}
		}
	}
	return nil
}

// account returns the service account ns/name. The default account is
// looked up again while it is missing, for a while (see
// defaultAccountAttempts); a missing one is a NotFound of "serviceaccount",
// as upstream words it.
func (a serviceAccountAdmission) account(ctx context.Context, l registry.Lookup, ns, name string) (registry.Object, error) {
	attempts := 1
	if name == defaultServiceAccount {
		attempts = defaultAccountAttempts
	}
	var pause time.Duration
	for i := range attempts {
		if i == 1 {
			pause = a.retryInterval()
		}
		if i > 0 {
			t := time.NewTimer(pause)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, ctx.Err()
			case <-t.C:
			}
		}
		sa, err := l.Get(a.accounts, ns, name)
		if apierr.ReasonOf(err) != apierr.ReasonNotFound {
			return sa, err
		}
	}
	return nil, fmt.Errorf("serviceaccount %q not found", name)
}

// automount says whether the pod gets the token volume: the pod's
// automountServiceAccountToken decides when set, then the account's, and
// else it does.
func automount(spec, sa registry.Object) bool {
	for _, m := range []registry.Object{spec, sa} {
		if v, ok := m["automountServiceAccountToken"].(bool); ok {
			return v
		}
	}
	return true
}

// mountToken mounts the token volume read-only in every container and
// init container that mounts nothing at the path yet, and adds the volume
// when one of them did. A volume the pod has already under the token
// volume's prefix is the one mounted, as upstream reuses it.
func (a serviceAccountAdmission) mountToken(spec map[string]any) {
	name, have := "", false
	for _, v := range mapsOf(spec["volumes"]) {
		if n := strOf(v["name"]); strings.HasPrefix(n, a.volumePrefix+"-") {
			name, have = n, true
			break
		}
	}
	if !have {
		name = registry.GenerateName(a.volumePrefix + "-")
	}
	// One boxed name serves the volume and every mount.
	nameValue := any(name)
	added := false
	for _, list := range []string{"initContainers", "containers"} {
		for _, c := range mapsOf(spec[list]) {
			mounted := false
			for _, m := range mapsOf(c["volumeMounts"]) {
				if strOf(m["mountPath"]) == a.mountPath {
					mounted = true
					break
				}
			}
			if !mounted {
				c["volumeMounts"] = append(listOf(c["volumeMounts"]), map[string]any{
					"name": nameValue, "readOnly": true, "mountPath": a.mountPathValue,
				})
				added = true
			}
		}
	}
	if !added || have {
		return
	}
	spec["volumes"] = append(listOf(spec["volumes"]), map[string]any{
		"name":      nameValue,
		"projected": a.projectedSource(),
	})
}

// limitSecretReferences returns why the pod may not reference a secret
// the account does not list ("" when it may): in a secret volume, in an
// environment variable or envFrom of an init container or container, or
// as an image pull secret the account's imagePullSecrets lack.
func limitSecretReferences(spec, sa registry.Object) string {
	account := str(sa, "metadata", "name")
	mountable := map[string]bool{}
	for _, s := range mapsOf(sa["secrets"]) {
		mountable[strOf(s["name"])] = true
	}
	for _, v := range mapsOf(spec["volumes"]) {
		if sec, ok := v["secret"].(map[string]any); ok && !mountable[strOf(sec["secretName"])] {
			return fmt.Sprintf("volume with secret.secretName=%q is not allowed because service account %s does not reference that secret", strOf(sec["secretName"]), account)
		}
	}
	for _, list := range []struct{ key, what string }{{"initContainers", "init container"}, {"containers", "container"}} {
		for _, c := range mapsOf(spec[list.key]) {
			for _, e := range mapsOf(c["env"]) {
				ref := mapOf(mapOf(e["valueFrom"])["secretKeyRef"])
				if ref != nil && !mountable[strOf(ref["name"])] {
					return fmt.Sprintf("%s %s with envVar %s referencing secret.secretName=%q is not allowed because service account %s does not reference that secret", list.what, strOf(c["name"]), strOf(e["name"]), strOf(ref["name"]), account)
				}
			}
			for _, e := range mapsOf(c["envFrom"]) {
				ref := mapOf(e["secretRef"])
				if ref != nil && !mountable[strOf(ref["name"])] {
					return fmt.Sprintf("%s %s with envFrom referencing secret.secretName=%q is not allowed because service account %s does not reference that secret", list.what, strOf(c["name"]), strOf(ref["name"]), account)
				}
			}
		}
	}
	pull := map[string]bool{}
	for _, s := range mapsOf(sa["imagePullSecrets"]) {
		pull[strOf(s["name"])] = true
	}
	for i, ref := range mapsOf(spec["imagePullSecrets"]) {
		if !pull[strOf(ref["name"])] {
			return fmt.Sprintf("imagePullSecrets[%d].name=%q is not allowed because service account %s does not reference that imagePullSecret", i, strOf(ref["name"]), account)
		}
	}
	return ""
}

// checkMirrorPod refuses a mirror pod that names a service account,
// references a secret, or projects a service account token: the node
// that made it has no such credentials to give it.
func checkMirrorPod(spec map[string]any) error {
	if strOf(spec["serviceAccountName"]) != "" {
		return &registry.Denial{Reason: "a mirror pod may not reference service accounts"}
	}
	if referencesSecret(spec) {
		return &registry.Denial{Reason: "a mirror pod may not reference secrets"}
	}
	for _, v := range mapsOf(spec["volumes"]) {
		for _, src := range mapsOf(mapOf(v["projected"])["sources"]) {
			if has(src, "serviceAccountToken") {
				return &registry.Denial{Reason: "a mirror pod may not use ServiceAccountToken volume projections"}
			}
		}
	}
	return nil
}

// envReferences reports whether any container of the pod takes its
// environment from objects of a kind: an envFrom source's from member or
// an env value's keyRef member names one.
func envReferences(spec map[string]any, from, keyRef string) bool {
	for _, list := range []string{"initContainers", "containers", "ephemeralContainers"} {
		for _, c := range mapsOf(spec[list]) {
			for _, e := range mapsOf(c["envFrom"]) {
				if has(e, from) {
					return true
				}
			}
			for _, e := range mapsOf(c["env"]) {
				if has(mapOf(e["valueFrom"]), keyRef) {
					return true
				}
			}
		}
	}
	return false
}

// secretRefVolumes are the volume sources that name a secret in a
// secretRef member.
var secretRefVolumes = []string{"cephfs", "cinder", "flexVolume", "rbd", "scaleIO", "iscsi", "storageos"}

// referencesSecret reports whether the pod names any secret: as an image
// pull secret, from any container's environment, or in a volume.
func referencesSecret(spec map[string]any) bool {
	if len(listOf(spec["imagePullSecrets"])) > 0 || envReferences(spec, "secretRef", "secretKeyRef") {
		return true
	}
	for _, v := range mapsOf(spec["volumes"]) {
		if has(v, "secret") || strOf(mapOf(v["azureFile"])["secretName"]) != "" || has(mapOf(v["csi"]), "nodePublishSecretRef") {
			return true
		}
		for _, src := range secretRefVolumes {
			if has(mapOf(v[src]), "secretRef") {
				return true
			}
		}
		for _, p := range mapsOf(mapOf(v["projected"])["sources"]) {
			if has(p, "secret") {
				return true
			}
		}
	}
	return false
}
