package builtin

import (
	"fmt"
	"net"
	"path"
	"path/filepath"
	"strings"

	"platd/server/apierr"
	"platd/server/registry"
	"platd/server/schema"
	"platd/server/validation"
)

// Limits of volume sources.
const (
	// minTokenExpiration and maxTokenExpiration bound a projected token's
	// life: ten minutes to 2^32 seconds.
	minTokenExpiration = 10 * 60
	maxTokenExpiration = 1 << 32
	// maxPartition is the largest disk partition number.
	maxPartition = 255
	// maxCSIDriverName is the longest CSI driver name.
	maxCSIDriverName = 63
	// maxISCSIInitiatorPortal bounds "<volume name>:<target portal>".
	maxISCSIInitiatorPortal = 64
)

// supportedHostPathTypes lists the hostPath types, sorted.
var supportedHostPathTypes = []string{"", "BlockDevice", "CharDevice", "Directory", "DirectoryOrCreate", "File", "FileOrCreate", "Socket"}

// validVolumeDownwardAPIPaths are the fields a downward API volume file
// may expose.
var validVolumeDownwardAPIPaths = []string{"metadata.annotations", "metadata.labels", "metadata.name", "metadata.namespace", "metadata.uid"}

// forbiddenSourceNames are the spellings upstream uses, for two sources,
// in the path of the "more than 1 volume type" error.
var forbiddenSourceNames = map[string]string{"cephfs": "cephFS", "downwardAPI": "downwarAPI"}

// validateVolumes checks the volumes of a spec and returns those without
// errors by name, for mounts to refer to.
func (c *specCheck) validateVolumes(p fieldPath) map[string]map[string]any {
	vols := map[string]map[string]any{}
	names := map[string]bool{}
	created := map[string]bool{}
	if c.opts.podName != "" {
		for _, vol := range mapsOf(c.spec["volumes"]) {
			if has(vol, "ephemeral") {
				created[c.opts.podName+"-"+strOf(vol["name"])] = true
			}
		}
	}
	for i, vol := range mapsOf(c.spec["volumes"]) {
		ip := p.index(i)
		name := strOf(vol["name"])
		el := c.validateVolumeSource(vol, ip, name)
		if name == "" {
			el = append(el, apierr.Required(ip.child("name").String(), ""))
		} else {
			el = append(el, dnsLabel(name, ip.child("name"))...)
		}
		if names[name] {
			el = append(el, apierr.Duplicate(ip.child("name").String(), name))
		}
		if len(el) == 0 {
			names[name] = true
			vols[name] = vol
		} else {
			c.add(el...)
		}
		if claim := strOf(mapOf(vol["persistentVolumeClaim"])["claimName"]); has(vol, "persistentVolumeClaim") && created[claim] {
			c.add(apierr.Invalid(ip.child("persistentVolumeClaim", "claimName").String(), claim, "must not reference a PVC that gets created for an ephemeral volume"))
		}
	}
	return vols
}

// validateVolumeSource checks that a volume names exactly one source and
// that source's own rules.
func (c *specCheck) validateVolumeSource(vol map[string]any, p fieldPath, volName string) apierr.FieldErrors {
	var errs apierr.FieldErrors
	n := 0
	var buf [2]string
	for _, s := range sourcesOf(buf[:0], vol) {
		sp := p.child(s)
		if n > 0 {
			if alt, ok := forbiddenSourceNames[s]; ok {
				sp = p.child(alt)
			}
			errs = append(errs, apierr.Forbidden(sp.String(), "may not specify more than 1 volume type"))
			continue
		}
		n++
		errs = append(errs, c.validateOneSource(s, mapOf(vol[s]), p, volName)...)
	}
	if iscsi := mapOf(vol["iscsi"]); iscsi != nil && has(iscsi, "initiatorName") &&
		len(volName+":"+strOf(iscsi["targetPortal"])) > maxISCSIInitiatorPortal {
		errs = append(errs, apierr.Invalid(p.child("name").String(), volName, "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if iscsi.initiatorName is specified."))
	}
	if n == 0 {
		errs = append(errs, apierr.Required(p.String(), "must specify a volume type"))
	}
	return errs
}

// required returns a Required error when m's string member key is empty.
func required(m map[string]any, key string, p fieldPath) apierr.FieldErrors {
	if strOf(m[key]) == "" {
		return apierr.FieldErrors{apierr.Required(p.child(key).String(), "")}
	}
	return nil
}

func (c *specCheck) validateOneSource(kind string, m map[string]any, p fieldPath, volName string) apierr.FieldErrors {
	sp := p.child(kind)
	var errs apierr.FieldErrors
	switch kind {
	case "emptyDir":
		if q, ok := schema.AmountOf(m["sizeLimit"]); ok && q.Sign() < 0 {
			errs = append(errs, apierr.Forbidden(sp.child("sizeLimit").String(), "SizeLimit field must be a valid resource quantity"))
		}
	case "hostPath":
		hp := strOf(m["path"])
		if hp == "" {
			return append(errs, apierr.Required(sp.child("path").String(), ""))
		}
		errs = append(errs, noBacksteps(hp, sp.child("path"))...)
		if t, ok := m["type"].(string); ok && !contains(supportedHostPathTypes, t) {
			errs = append(errs, notSupported(sp.child("type"), t, supportedHostPathTypes...))
		}
	case "gitRepo":
		errs = append(errs, required(m, "repository", sp)...)
		errs = append(errs, localDescendingPath(strOf(m["directory"]), sp.child("directory"))...)
	case "gcePersistentDisk":
		// Upstream reports this source's errors under a shorter name.
		dp := p.child("persistentDisk")
		errs = append(errs, required(m, "pdName", dp)...)
		errs = append(errs, partition(m, dp)...)
	case "awsElasticBlockStore":
		errs = append(errs, required(m, "volumeID", sp)...)
		errs = append(errs, partition(m, sp)...)
	case "secret":
		errs = append(errs, required(m, "secretName", sp)...)
		errs = append(errs, validateFileMode(m, "defaultMode", sp)...)
		errs = append(errs, keyToPaths(m, sp)...)
	case "configMap":
		errs = append(errs, required(m, "name", sp)...)
		errs = append(errs, validateFileMode(m, "defaultMode", sp)...)
		errs = append(errs, keyToPaths(m, sp)...)
	case "nfs":
		errs = append(errs, required(m, "server", sp)...)
		errs = append(errs, required(m, "path", sp)...)
		if np := strOf(m["path"]); !path.IsAbs(np) {
			errs = append(errs, apierr.Invalid(sp.child("path").String(), np, "must be an absolute path"))
		}
	case "iscsi":
		errs = append(errs, validateISCSI(m, sp)...)
	case "glusterfs":
		errs = append(errs, required(m, "endpoints", sp)...)
		errs = append(errs, required(m, "path", sp)...)
	case "flocker":
		name, uid := strOf(m["datasetName"]), strOf(m["datasetUUID"])
		if name == "" && uid == "" {
			errs = append(errs, apierr.Required(sp.String(), "one of datasetName and datasetUUID is required"))
		}
		if name != "" && uid != "" {
			errs = append(errs, apierr.Invalid(sp.String(), "resource", "datasetName and datasetUUID can not be specified simultaneously"))
		}
		if strings.Contains(name, "/") {
			errs = append(errs, apierr.Invalid(sp.child("datasetName").String(), name, "must not contain '/'"))
		}
	case "persistentVolumeClaim":
		errs = append(errs, required(m, "claimName", sp)...)
	case "rbd":
		if len(listOf(m["monitors"])) == 0 {
			errs = append(errs, apierr.Required(sp.child("monitors").String(), ""))
		}
		errs = append(errs, required(m, "image", sp)...)
	case "cinder":
		errs = append(errs, required(m, "volumeID", sp)...)
		errs = append(errs, secretRefName(m, sp)...)
	case "cephfs":
		if len(listOf(m["monitors"])) == 0 {
			errs = append(errs, apierr.Required(p.child("cephfs", "monitors").String(), ""))
		}
	case "quobyte":
		errs = append(errs, validateQuobyte(m, sp)...)
	case "downwardAPI":
		errs = append(errs, validateFileMode(m, "defaultMode", sp)...)
		for _, f := range mapsOf(m["items"]) {
			errs = append(errs, downwardAPIFile(f, sp)...)
		}
	case "fc":
		errs = append(errs, validateFC(m, sp)...)
	case "flexVolume":
		errs = append(errs, required(m, "driver", sp)...)
		for _, k := range sortedKeys(mapOf(m["options"])) {
			ns := k
			if before, _, ok := strings.Cut(k, "/"); ok {
				ns = before
			}
			norm := "." + strings.ToLower(ns)
			if strings.HasSuffix(norm, "."+c.r.longDomain) || strings.HasSuffix(norm, "."+c.r.domain) {
				errs = append(errs, apierr.Invalid(sp.child("options").key(k).String(), k, fmt.Sprintf("%s and %s namespaces are reserved", c.r.longDomain, c.r.domain)))
			}
		}
	case "azureFile":
		errs = append(errs, required(m, "secretName", sp)...)
		errs = append(errs, required(m, "shareName", sp)...)
	case "vsphereVolume":
		errs = append(errs, required(m, "volumePath", sp)...)
	case "photonPersistentDisk":
		errs = append(errs, required(m, "pdID", sp)...)
	case "portworxVolume":
		errs = append(errs, required(m, "volumeID", sp)...)
	case "azureDisk":
		errs = append(errs, validateAzureDisk(m, sp)...)
	case "storageos":
		if name := strOf(m["volumeName"]); name == "" {
			errs = append(errs, apierr.Required(sp.child("volumeName").String(), ""))
		} else {
			errs = append(errs, dnsLabel(name, sp.child("volumeName"))...)
		}
		if ns := strOf(m["volumeNamespace"]); ns != "" {
			errs = append(errs, dnsLabel(ns, sp.child("volumeNamespace"))...)
		}
		errs = append(errs, secretRefName(m, sp)...)
	case "projected":
		errs = append(errs, validateFileMode(m, "defaultMode", sp)...)
		errs = append(errs, c.validateProjections(m, sp)...)
	case "scaleIO":
		errs = append(errs, required(m, "gateway", sp)...)
		errs = append(errs, required(m, "system", sp)...)
		errs = append(errs, required(m, "volumeName", sp)...)
	case "csi":
		errs = append(errs, validateCSIDriverName(strOf(m["driver"]), sp.child("driver"))...)
		if ref := mapOf(m["nodePublishSecretRef"]); has(m, "nodePublishSecretRef") {
			if name := strOf(ref["name"]); name == "" {
				errs = append(errs, apierr.Required(sp.child("nodePublishSecretRef", "name").String(), ""))
			} else {
				// Upstream reports this under the source's own name member.
				errs = append(errs, dnsSubdomain(name, sp.child("name"))...)
			}
		}
	case "ephemeral":
		tmpl := mapOf(m["volumeClaimTemplate"])
		if tmpl == nil {
			errs = append(errs, apierr.Required(sp.child("volumeClaimTemplate").String(), ""))
		} else {
			tp := sp.child("volumeClaimTemplate")
			errs = append(errs, validateLabels(mapOf(mapOf(tmpl["metadata"])["labels"]), tp.child("metadata", "labels").String())...)
			errs = append(errs, validateClaimSpec(mapOf(tmpl["spec"]), nil, tp.child("spec"))...)
		}
		if c.opts.podName != "" && volName != "" {
			pvc := c.opts.podName + "-" + volName
			for _, msg := range validation.IsDNS1123Subdomain(pvc) {
				errs = append(errs, apierr.Invalid(p.child("name").String(), volName, fmt.Sprintf("PVC name %q: %v", pvc, msg)))
			}
		}
	case "image":
		errs = append(errs, required(m, "reference", sp)...)
	}
	return errs
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func partition(m map[string]any, p fieldPath) apierr.FieldErrors {
	if n := intAt(m, "partition"); n < 0 || n > maxPartition {
		return apierr.FieldErrors{apierr.Invalid(p.child("partition").String(), n, inclusiveRange(1, maxPartition))}
	}
	return nil
}

func secretRefName(m map[string]any, p fieldPath) apierr.FieldErrors {
	if has(m, "secretRef") && strOf(mapOf(m["secretRef"])["name"]) == "" {
		return apierr.FieldErrors{apierr.Required(p.child("secretRef", "name").String(), "")}
	}
	return nil
}

// keyToPaths checks the items of a secret or configMap source.
func keyToPaths(m map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	for i, kp := range mapsOf(m["items"]) {
		errs = append(errs, keyToPath(kp, p.child("items").index(i))...)
	}
	return errs
}

func keyToPath(kp map[string]any, p fieldPath) apierr.FieldErrors {
	errs := required(kp, "key", p)
	errs = append(errs, required(kp, "path", p)...)
	errs = append(errs, localNonReservedPath(strOf(kp["path"]), p.child("path"))...)
	return append(errs, validateFileMode(kp, "mode", p)...)
}

// noBacksteps refuses a path with a ".." element.
func noBacksteps(target string, p fieldPath) apierr.FieldErrors {
	for _, part := range strings.Split(filepath.ToSlash(target), "/") {
		if part == ".." {
			return apierr.FieldErrors{apierr.Invalid(p.String(), target, "must not contain '..'")}
		}
	}
	return nil
}

// localDescendingPath refuses absolute paths and backsteps.
func localDescendingPath(target string, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if path.IsAbs(target) {
		errs = append(errs, apierr.Invalid(p.String(), target, "must be a relative path"))
	}
	return append(errs, noBacksteps(target, p)...)
}

// localNonReservedPath also refuses a path starting with "..".
func localNonReservedPath(target string, p fieldPath) apierr.FieldErrors {
	errs := localDescendingPath(target, p)
	if strings.HasPrefix(target, "..") && !strings.HasPrefix(target, "../") {
		errs = append(errs, apierr.Invalid(p.String(), target, "must not start with '..'"))
	}
	return errs
}

func downwardAPIFile(f map[string]any, p fieldPath) apierr.FieldErrors {
	errs := required(f, "path", p)
	errs = append(errs, localNonReservedPath(strOf(f["path"]), p.child("path"))...)
	switch {
	case has(f, "fieldRef"):
		errs = append(errs, validateObjectFieldSelector(mapOf(f["fieldRef"]), validVolumeDownwardAPIPaths, p.child("fieldRef"))...)
		if has(f, "resourceFieldRef") {
			errs = append(errs, apierr.Invalid(p.String(), "resource", "fieldRef and resourceFieldRef can not be specified simultaneously"))
		}
	case has(f, "resourceFieldRef"):
		errs = append(errs, validateResourceFieldSelector(mapOf(f["resourceFieldRef"]), p.child("resourceFieldRef"), true)...)
	default:
		errs = append(errs, apierr.Required(p.String(), "one of fieldRef and resourceFieldRef is required"))
	}
	return append(errs, validateFileMode(f, "mode", p)...)
}

// validateProjections checks the sources of a projected volume, and that
// no two write the same path.
func (c *specCheck) validateProjections(m map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	paths := map[string]bool{}
	seen := func(pathValue string, value any) {
		if pathValue == "" {
			return
		}
		if paths[pathValue] {
			errs = append(errs, apierr.Invalid(p.String(), value, "conflicting duplicate paths"))
		}
		paths[pathValue] = true
	}
	for i, src := range mapsOf(m["sources"]) {
		n := 0
		sp := p.child("sources").index(i)
		for _, kind := range []string{"secret", "configMap"} {
			s := mapOf(src[kind])
			if !has(src, kind) {
				continue
			}
			n++
			kp := sp.child(kind)
			errs = append(errs, required(s, "name", kp)...)
			for j, item := range mapsOf(s["items"]) {
				errs = append(errs, keyToPath(item, kp.child("items").index(j))...)
				if strOf(item["path"]) != "" {
					seen(strOf(item["path"]), strOf(s["name"]))
				}
			}
		}
		if has(src, "downwardAPI") {
			n++
			for _, f := range mapsOf(mapOf(src["downwardAPI"])["items"]) {
				errs = append(errs, downwardAPIFile(f, sp.child("downwardAPI"))...)
				seen(strOf(f["path"]), strOf(f["path"]))
			}
		}
		if has(src, "serviceAccountToken") {
			n++
			t := mapOf(src["serviceAccountToken"])
			tp := sp.child("serviceAccountToken")
			exp := intAt(t, "expirationSeconds")
			if exp < minTokenExpiration {
				errs = append(errs, apierr.Invalid(tp.child("expirationSeconds").String(), exp, "may not specify a duration less than 10 minutes"))
			}
			if exp > maxTokenExpiration {
				errs = append(errs, apierr.Invalid(tp.child("expirationSeconds").String(), exp, "may not specify a duration larger than 2^32 seconds"))
			}
			// Upstream reports the token path at the volume, not the source.
			if tokenPath := strOf(t["path"]); tokenPath == "" {
				errs = append(errs, apierr.Required(p.child("path").String(), ""))
			} else {
				errs = append(errs, localNonReservedPath(tokenPath, p.child("path"))...)
			}
		}
		if n > 1 {
			errs = append(errs, apierr.Forbidden(sp.String(), "may not specify more than 1 volume type per source"))
		}
	}
	return errs
}

func validateISCSI(m map[string]any, p fieldPath) apierr.FieldErrors {
	errs := required(m, "targetPortal", p)
	iqn := strOf(m["iqn"])
	if iqn == "" {
		errs = append(errs, apierr.Required(p.child("iqn").String(), ""))
	} else if !hasAnyPrefix(iqn, "iqn", "eui", "naa") {
		errs = append(errs, apierr.Invalid(p.child("iqn").String(), iqn, "must be valid format starting with iqn, eui, or naa"))
	} else if !iscsiNameValid(iqn) {
		errs = append(errs, apierr.Invalid(p.child("iqn").String(), iqn, "must be valid format"))
	}
	if lun := intAt(m, "lun"); lun < 0 || lun > maxPartition {
		errs = append(errs, apierr.Invalid(p.child("lun").String(), lun, inclusiveRange(0, maxPartition)))
	}
	if (boolOf(m["chapAuthDiscovery"]) || boolOf(m["chapAuthSession"])) && !has(m, "secretRef") {
		errs = append(errs, apierr.Required(p.child("secretRef").String(), ""))
	}
	if has(m, "initiatorName") {
		init := strOf(m["initiatorName"])
		ip := p.child("initiatorname")
		if !hasAnyPrefix(init, "iqn", "eui", "naa") {
			errs = append(errs, apierr.Invalid(ip.String(), init, "must be valid format starting with iqn, eui, or naa"))
		} else if !iscsiNameValid(init) {
			errs = append(errs, apierr.Invalid(ip.String(), init, "must be valid format"))
		}
	}
	return errs
}

// Forms of iSCSI qualified names.
var (
	iscsiIQNRe = lazyRegexp(`iqn\.\d{4}-\d{2}\.([[:alnum:]-.]+)(:[^,;*&$|\s]+)$`)
	iscsiEUIRe = lazyRegexp(`^eui.[[:alnum:]]{16}$`)
	iscsiNAARe = lazyRegexp(`^naa.[[:alnum:]]{32}$`)
)

// iscsiNameValid checks a name that starts with iqn, eui or naa.
func iscsiNameValid(s string) bool {
	switch {
	case strings.HasPrefix(s, "iqn"):
		return iscsiIQNRe().MatchString(s)
	case strings.HasPrefix(s, "eui"):
		return iscsiEUIRe().MatchString(s)
	default:
		return iscsiNAARe().MatchString(s)
	}
}

func isHostPort(s string) bool {
	_, _, err := net.SplitHostPort(s)
	return err == nil
}

func hasAnyPrefix(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func validateQuobyte(m map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	const hostPorts = "must be a host:port pair or multiple pairs separated by commas"
	registry := strOf(m["registry"])
	switch {
	case registry == "":
		errs = append(errs, apierr.Required(p.child("registry").String(), hostPorts))
	case len(strOf(m["tenant"])) >= 65:
		errs = append(errs, apierr.Required(p.child("tenant").String(), "must be a UUID and may not exceed a length of 64 characters"))
	default:
		for _, pair := range strings.Split(registry, ",") {
			if !isHostPort(pair) {
				errs = append(errs, apierr.Invalid(p.child("registry").String(), registry, hostPorts))
			}
		}
	}
	return append(errs, required(m, "volume", p)...)
}

func validateFC(m map[string]any, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	wwns, wwids := listOf(m["targetWWNs"]), listOf(m["wwids"])
	if len(wwns) == 0 && len(wwids) == 0 {
		errs = append(errs, apierr.Required(p.child("targetWWNs").String(), "must specify either targetWWNs or wwids, but not both"))
	}
	if len(wwns) != 0 && len(wwids) != 0 {
		errs = append(errs, apierr.Invalid(p.child("targetWWNs").String(), registry.Strings(wwns), "targetWWNs and wwids can not be specified simultaneously"))
	}
	if len(wwns) != 0 {
		if !has(m, "lun") {
			errs = append(errs, apierr.Required(p.child("lun").String(), "lun is required if targetWWNs is specified"))
		} else if lun := intAt(m, "lun"); lun < 0 || lun > maxPartition {
			errs = append(errs, apierr.Invalid(p.child("lun").String(), lun, inclusiveRange(0, maxPartition)))
		}
	}
	return errs
}

func validateAzureDisk(m map[string]any, p fieldPath) apierr.FieldErrors {
	errs := required(m, "diskName", p)
	errs = append(errs, required(m, "diskURI", p)...)
	if mode, ok := m["cachingMode"].(string); ok && !contains([]string{"None", "ReadOnly", "ReadWrite"}, mode) {
		errs = append(errs, notSupported(p.child("cachingMode"), mode, "None", "ReadOnly", "ReadWrite"))
	}
	kind, hasKind := m["kind"].(string)
	if hasKind && !contains([]string{"Dedicated", "Managed", "Shared"}, kind) {
		errs = append(errs, notSupported(p.child("kind"), kind, "Dedicated", "Managed", "Shared"))
	}
	uri := strOf(m["diskURI"])
	if hasKind && kind == "Managed" && !strings.HasPrefix(uri, "/subscriptions/") {
		errs = append(errs, notSupported(p.child("diskURI"), uri, "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}"))
	}
	if hasKind && kind != "Managed" && !strings.HasPrefix(uri, "https://") {
		errs = append(errs, notSupported(p.child("diskURI"), uri, "https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd"))
	}
	return errs
}

// validateCSIDriverName checks a CSI driver name wherever an object names
// one (volume sources, CSINode drivers, VolumeAttachment attachers).
func validateCSIDriverName(name string, p fieldPath) apierr.FieldErrors {
	var errs apierr.FieldErrors
	if name == "" {
		errs = append(errs, apierr.Required(p.String(), ""))
	}
	if len(name) > maxCSIDriverName {
		errs = append(errs, apierr.TooLong(p.String(), maxCSIDriverName))
	}
	return append(errs, invalidEach(p, name, validation.IsDNS1123Subdomain(strings.ToLower(name)))...)
}
