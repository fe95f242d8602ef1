package io.relock.spring;

import java.util.Map;

import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Makes sure the context has an auto-proxy creator, which applies Relock's advisors to the
 * beans, with class proxies when {@link EnableRelock#proxyTargetClass()} asks for them.
 */
final class RelockProxyRegistrar implements ImportBeanDefinitionRegistrar {

    @Override
    public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
        AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
        Map<String, Object> attributes = metadata.getAnnotationAttributes(EnableRelock.class.getName());
        if (attributes != null && Boolean.TRUE.equals(attributes.get("proxyTargetClass"))) {
            AopConfigUtils.forceAutoProxyCreatorToUseClassProxying(registry);
        }
    }
}
