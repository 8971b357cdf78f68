package oauth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// assertionLifetime is how long a client assertion is good for: it is
// made for one token request, so a short life limits what a copy is
// worth.
const assertionLifetime = 2 * time.Minute

// parseKey reads a PEM private key: PKCS #8 ("PRIVATE KEY"), SEC 1 ("EC
// PRIVATE KEY") or PKCS #1 ("RSA PRIVATE KEY").
func parseKey(data []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("oauth: the private key is not PEM")
	}
	var key any
	var err error
	switch block.Type {
	case "PRIVATE KEY":
		key, err = x509.ParsePKCS8PrivateKey(block.Bytes)
	case "EC PRIVATE KEY":
		key, err = x509.ParseECPrivateKey(block.Bytes)
	case "RSA PRIVATE KEY":
		key, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	default:
		return nil, fmt.Errorf("oauth: the private key is a %q block; want an unencrypted PRIVATE KEY, EC PRIVATE KEY or RSA PRIVATE KEY", block.Type)
	}
	if err != nil {
		return nil, fmt.Errorf("oauth: the private key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("oauth: a %T cannot sign", key)
	}
	return signer, nil
}

// keyAlgorithms are the JWS algorithms key can sign with, the usual one
// first.
func keyAlgorithms(key crypto.Signer) []string {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		switch k.Curve.Params().BitSize {
		case 256:
			return []string{"ES256"}
		case 384:
			return []string{"ES384"}
		case 521:
			return []string{"ES512"}
		}
	case *rsa.PrivateKey:
		return []string{"RS256", "PS256", "RS384", "PS384", "RS512", "PS512"}
	case ed25519.PrivateKey:
		return []string{"EdDSA"}
	}
	return nil
}

// signingMethod is the algorithm to sign key's assertions with: want when
// set (it must suit the key), else the first the key suits that the
// authorization server offers (all, when it lists none).
func signingMethod(key crypto.Signer, want string, offered []string) (jwt.SigningMethod, error) {
	own := keyAlgorithms(key)
	pick := ""
	switch {
	case want != "":
		if !slices.Contains(own, want) {
			return nil, fmt.Errorf("oauth: a %s key cannot sign %s (it signs %s)", keyKind(key), want, strings.Join(own, ", "))
		}
		pick = want
	default:
		for _, a := range own {
			if len(offered) == 0 || slices.Contains(offered, a) {
				pick = a
				break
			}
		}
		if pick == "" {
			return nil, fmt.Errorf("oauth: the authorization server takes assertions signed with %s; a %s key signs %s",
				strings.Join(offered, ", "), keyKind(key), strings.Join(own, ", "))
		}
	}
	return jwt.GetSigningMethod(pick), nil
}

func keyKind(key crypto.Signer) string {
	switch k := key.(type) {
	case *ecdsa.PrivateKey:
		return "ECDSA " + k.Curve.Params().Name
	case *rsa.PrivateKey:
		return "RSA"
	case ed25519.PrivateKey:
		return "Ed25519"
	}
	return fmt.Sprintf("%T", key)
}

// sign makes the client assertion of clientID for the authorization
// server audience: the client is both issuer and subject, and the
// assertion is unique (jti) and short-lived.
func sign(key crypto.Signer, method jwt.SigningMethod, clientID, audience string) (string, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", fmt.Errorf("oauth: assertion id: %w", err)
	}
	now := time.Now()
	claims := jwt.RegisteredClaims{
		Issuer: clientID, Subject: clientID, Audience: jwt.ClaimStrings{audience},
		IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(assertionLifetime)),
		ID: hex.EncodeToString(id[:]),
	}
	s, err := jwt.NewWithClaims(method, claims).SignedString(key)
	if err != nil {
		return "", fmt.Errorf("oauth: signing the client assertion: %w", err)
	}
	return s, nil
}
