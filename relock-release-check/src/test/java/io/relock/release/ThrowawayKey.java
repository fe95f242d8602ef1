package io.relock.release;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Date;
import java.util.HexFormat;

import org.bouncycastle.bcpg.ArmoredOutputStream;
import org.bouncycastle.bcpg.HashAlgorithmTags;
import org.bouncycastle.bcpg.PublicKeyAlgorithmTags;
import org.bouncycastle.bcpg.PublicKeyPacket;
import org.bouncycastle.bcpg.SymmetricKeyAlgorithmTags;
import org.bouncycastle.crypto.generators.RSAKeyPairGenerator;
import org.bouncycastle.crypto.params.RSAKeyGenerationParameters;
import org.bouncycastle.openpgp.PGPException;
import org.bouncycastle.openpgp.PGPKeyPair;
import org.bouncycastle.openpgp.PGPKeyRingGenerator;
import org.bouncycastle.openpgp.PGPPublicKey;
import org.bouncycastle.openpgp.PGPSecretKeyRing;
import org.bouncycastle.openpgp.PGPSignature;
import org.bouncycastle.openpgp.PGPSignatureList;
import org.bouncycastle.openpgp.PGPUtil;
import org.bouncycastle.openpgp.bc.BcPGPObjectFactory;
import org.bouncycastle.openpgp.operator.PGPDigestCalculator;
import org.bouncycastle.openpgp.operator.bc.BcPBESecretKeyEncryptorBuilder;
import org.bouncycastle.openpgp.operator.bc.BcPGPContentSignerBuilder;
import org.bouncycastle.openpgp.operator.bc.BcPGPContentVerifierBuilderProvider;
import org.bouncycastle.openpgp.operator.bc.BcPGPDigestCalculatorProvider;
import org.bouncycastle.openpgp.operator.bc.BcPGPKeyPair;

/**
 * An OpenPGP signing key made for one test run and never written anywhere but the release
 * build's environment: the secret key goes to the build as {@code MAVEN_GPG_KEY} (armored, as a
 * maintainer exports theirs), and the public key checks the signatures that come back.
 */
final class ThrowawayKey {

    private final PGPSecretKeyRing secretKeys;
    private final PGPPublicKey publicKey;
    private final String passphrase;

    private ThrowawayKey(PGPSecretKeyRing secretKeys, String passphrase) {
        this.secretKeys = secretKeys;
        this.publicKey = secretKeys.getPublicKey();
        this.passphrase = passphrase;
    }

    /** An RSA 2048 key that can sign, its secret part encrypted with a random passphrase. */
    static ThrowawayKey generate() throws PGPException {
        SecureRandom random = new SecureRandom();
        RSAKeyPairGenerator rsa = new RSAKeyPairGenerator();
        rsa.init(new RSAKeyGenerationParameters(BigInteger.valueOf(0x10001), random, 2048, 80));
        PGPKeyPair pair = new BcPGPKeyPair(
                PublicKeyPacket.VERSION_4, PublicKeyAlgorithmTags.RSA_GENERAL, rsa.generateKeyPair(), new Date());

        byte[] secret = new byte[16];
        random.nextBytes(secret);
        String passphrase = HexFormat.of().formatHex(secret);

        PGPDigestCalculator sha1 = new BcPGPDigestCalculatorProvider().get(HashAlgorithmTags.SHA1);
        PGPKeyRingGenerator rings = new PGPKeyRingGenerator(
                PGPSignature.POSITIVE_CERTIFICATION, pair,
                "Relock release check (throwaway) <release-check@relock.invalid>", sha1, null, null,
                new BcPGPContentSignerBuilder(PublicKeyAlgorithmTags.RSA_GENERAL, HashAlgorithmTags.SHA256),
                new BcPBESecretKeyEncryptorBuilder(SymmetricKeyAlgorithmTags.AES_256, sha1)
                        .build(passphrase.toCharArray()));
        return new ThrowawayKey(rings.generateSecretKeyRing(), passphrase);
    }

    /** The secret key in ASCII armor, as {@code gpg --armor --export-secret-keys} prints one. */
    String armoredSecretKey() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (ArmoredOutputStream armor = new ArmoredOutputStream(out)) {
            secretKeys.encode(armor);
        }
        return out.toString(StandardCharsets.US_ASCII);
    }

    String passphrase() {
        return passphrase;
    }

    /**
     * Whether {@code signature} (an armored detached signature, a {@code .asc} file) is one
     * signature by this key over exactly {@code data}.
     */
    boolean signed(byte[] signature, byte[] data) throws IOException, PGPException {
        BcPGPObjectFactory objects =
                new BcPGPObjectFactory(PGPUtil.getDecoderStream(new ByteArrayInputStream(signature)));
        if (!(objects.nextObject() instanceof PGPSignatureList list) || list.size() != 1) {
            return false;
        }
        PGPSignature one = list.get(0);
        if (!one.hasKeyIdentifier(publicKey.getKeyIdentifier())) {
            return false;
        }
        one.init(new BcPGPContentVerifierBuilderProvider(), publicKey);
        one.update(data);
        return one.verify();
    }
}
