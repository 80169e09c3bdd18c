/** The group and version every machine-readable document of this tool carries (plan, results). */
export const DOCUMENT_API_VERSION = 'cloudscale-ccm/v1';
