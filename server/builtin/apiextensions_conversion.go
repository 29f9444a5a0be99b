package builtin

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"

	"platd/server/apierr"
)

// conversionReviewVersions are the ConversionReview versions a webhook
// may be sent, sorted.
var conversionReviewVersions = []string{"v1", "v1beta1"}

func recognizedReviewVersionOrNone(versions []any) bool {
	if len(versions) == 0 {
		return true
	}
	for _, v := range versions {
		if slices.Contains(conversionReviewVersions, strOf(v)) {
			return true
		}
	}
	return false
}

// validateConversion checks spec.conversion; the webhook's members are
// reported at their internal paths, on the conversion itself.
func validateConversion(conv map[string]any, o crdOptions) apierr.FieldErrors {
	if conv == nil {
		return nil
	}
	const p = "spec.conversion"
	strategy := strOf(conv["strategy"])
	errs := enumString(p+".strategy", strategy, conversionNone, conversionWebhook)
	webhook := mapOf(conv["webhook"])
	cc := mapOf(webhook["clientConfig"])
	reviewVersions := listOf(webhook["conversionReviewVersions"])
	if strategy != conversionWebhook {
		if cc != nil {
			errs = append(errs, apierr.Forbidden(p+".webhookClientConfig", "should not be set when strategy is not set to Webhook"))
		}
		if len(reviewVersions) > 0 {
			errs = append(errs, apierr.Forbidden(p+".conversionReviewVersions", "should not be set when strategy is not set to Webhook"))
		}
		return errs
	}
	if cc == nil {
		errs = append(errs, apierr.Required(p+".webhookClientConfig", "required when strategy is set to Webhook"))
	} else {
		errs = append(errs, validateClientConfig(cc, p+".webhookClientConfig")...)
		if bundle := decodeBytes(strOf(cc["caBundle"])); len(bundle) > 0 && !o.allowInvalidCABundle {
			if msg := caBundleProblem(bundle); msg != "" {
				errs = append(errs, apierr.Invalid(p+".webhookClientConfig.caBundle", goSyntax(fmt.Sprintf("%#v", bundle)), msg))
			}
		}
	}
	return append(errs, validateReviewVersions(reviewVersions, conversionReviewVersions, o.requireRecognizedConversionReviewVersion, p+".conversionReviewVersions", "")...)
}

// caBundleProblem says why a PEM bundle holds no usable certificate, ""
// when it holds one: blocks other than plain CERTIFICATE blocks are
// skipped, and a certificate that does not parse is the problem.
func caBundleProblem(bundle []byte) string {
	found := false
	for len(bundle) > 0 {
		var block *pem.Block
		block, bundle = pem.Decode(bundle)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" || len(block.Headers) != 0 {
			continue
		}
		if _, err := x509.ParseCertificate(block.Bytes); err != nil {
			return err.Error()
		}
		found = true
	}
	if !found {
		return "data does not contain any valid RSA or ECDSA certificates"
	}
	return ""
}
