"""The invented registry records of the demo corpus (pure data, used by
``make_replay_registries.py``).

Drug "zentravir", condition "Farrow syndrome", sponsor and numbers are all made up; ids are
outside the real ranges (NCT99xxxxxx, set ids starting ``5eed``). Shapes follow ClinicalTrials.gov
API v2 (the module list of ``pipeline.sources.clinicaltrials.FIELDS``) and openFDA
``drug/label.json`` exactly.
"""

from __future__ import annotations

from typing import Any

JSON = "application/json"
JSON_UTF8 = "application/json; charset=utf-8"
DEMO_NCT = ("NCT99000001", "NCT99000002", "NCT99000003")
DEMO_SETID = "5eed0001-0000-4000-8000-000000000001"
SPONSOR = "Farrow Research Consortium (fictional)"

# -- ClinicalTrials.gov studies -----------------------------------------------------------------

ELIGIBILITY_1 = """Inclusion Criteria:

* Children aged 6 to 17 years with a confirmed diagnosis of Farrow syndrome
* At least two documented Farrow flares in the 12 months before screening
* Body weight ≥20 kg

Exclusion Criteria:

* Prior treatment with zentravir or any other investigational antiviral within 90 days
* eGFR \\<60 mL/min/1.73 m2 at screening
* Known hypersensitivity to zentravir or to any excipient of the study tablets"""


def status_module(
    overall: str,
    last_update: str,
    *,
    first_posted: str,
    why_stopped: str | None = None,
    results_posted: str | None = None,
    start: str = "2024-03-04",
    completion: tuple[str, str] = ("2026-06", "ESTIMATED"),
) -> dict[str, Any]:
    module: dict[str, Any] = {
        "statusVerifiedDate": last_update[:7],
        "overallStatus": overall,
    }
    if why_stopped:
        module["whyStopped"] = why_stopped
    module.update(
        {
            "expandedAccessInfo": {"hasExpandedAccess": False},
            "startDateStruct": {"date": start, "type": "ACTUAL"},
            "primaryCompletionDateStruct": {"date": completion[0], "type": completion[1]},
            "completionDateStruct": {"date": completion[0], "type": completion[1]},
            "studyFirstSubmitDate": first_posted,
            "studyFirstSubmitQcDate": first_posted,
            "studyFirstPostDateStruct": {"date": first_posted, "type": "ACTUAL"},
        }
    )
    if results_posted:
        module["resultsFirstSubmitDate"] = results_posted
        module["resultsFirstPostDateStruct"] = {"date": results_posted, "type": "ACTUAL"}
    module["lastUpdateSubmitDate"] = last_update
    module["lastUpdatePostDateStruct"] = {"date": last_update, "type": "ACTUAL"}
    return module


def _arms(arms: list[tuple[str, str, str, str]]) -> dict[str, Any]:
    """(label, type, description, drug) per arm → armsInterventionsModule."""
    return {
        "armGroups": [
            {
                "label": label,
                "type": kind,
                "description": description,
                "interventionNames": [f"Drug: {drug}"],
            }
            for label, kind, description, drug in arms
        ],
        "interventions": [
            {
                "type": "DRUG",
                "name": drug,
                "description": description,
                "armGroupLabels": [label],
            }
            for label, _, description, drug in arms
        ],
    }


def trial_1(update: bool) -> dict[str, Any]:
    """NCT99000001: the zentravir trial; ``update`` gives the 2025-06-02 version."""
    summary = (
        "This randomized, double-blind, placebo-controlled trial tests whether zentravir "
        "reduces the number of Farrow flares in children with Farrow syndrome. "
        "Participants take zentravir or placebo once daily for 24 weeks."
    )
    primary = {
        "measure": "Number of Farrow flares per participant",
        "description": "Flares are confirmed by a blinded adjudication committee.",
        "timeFrame": "24 weeks",
    }
    if update:
        summary = (
            "This randomized, double-blind, placebo-controlled trial tests whether zentravir "
            "reduces the number of Farrow flares in children with Farrow syndrome. "
            "Participants take zentravir or placebo once daily for 48 weeks, after a protocol "
            "amendment extended treatment from 24 weeks."
        )
        primary = {
            "measure": "Annualized rate of adjudicated Farrow flares",
            "description": (
                "Flares are confirmed by a blinded adjudication committee; the rate is "
                "expressed per participant-year."
            ),
            "timeFrame": "48 weeks",
        }
    last_update = "2025-06-02" if update else "2025-01-15"
    overall = "ACTIVE_NOT_RECRUITING" if update else "RECRUITING"
    return {
        "protocolSection": {
            "identificationModule": {
                "nctId": "NCT99000001",
                "orgStudyIdInfo": {"id": "FRC-ZEN-301"},
                "organization": {"fullName": SPONSOR, "class": "OTHER"},
                "briefTitle": "Zentravir for Children With Farrow Syndrome (ZEN-FARROW-1)",
                "officialTitle": (
                    "A Randomized, Double-Blind, Placebo-Controlled Phase 3 Trial of Zentravir "
                    "in Children Aged 6 to 17 Years With Farrow Syndrome"
                ),
                "acronym": "ZEN-FARROW-1",
            },
            "statusModule": status_module(overall, last_update, first_posted="2024-02-20"),
            "sponsorCollaboratorsModule": {
                "responsibleParty": {"type": "SPONSOR"},
                "leadSponsor": {"name": SPONSOR, "class": "OTHER"},
            },
            "descriptionModule": {
                "briefSummary": summary,
                "detailedDescription": (
                    "Farrow syndrome is an invented condition used only in citeseal's demo "
                    "corpus. Children with the syndrome have recurrent flares of fever and "
                    "joint pain.\n\nEligible children are randomly assigned 1:1 to zentravir "
                    "5 mg/kg or matching placebo. Flares are recorded in a daily diary and "
                    "confirmed by a committee that does not know the assigned treatment."
                ),
            },
            "conditionsModule": {"conditions": ["Farrow Syndrome"], "keywords": ["zentravir"]},
            "designModule": {
                "studyType": "INTERVENTIONAL",
                "phases": ["PHASE3"],
                "designInfo": {
                    "allocation": "RANDOMIZED",
                    "interventionModel": "PARALLEL",
                    "primaryPurpose": "TREATMENT",
                    "maskingInfo": {
                        "masking": "DOUBLE",
                        "whoMasked": ["PARTICIPANT", "INVESTIGATOR"],
                    },
                },
                "enrollmentInfo": {"count": 240, "type": "ESTIMATED"},
            },
            "armsInterventionsModule": _arms(
                [
                    (
                        "Zentravir",
                        "EXPERIMENTAL",
                        "Zentravir 5 mg/kg orally once daily",
                        "Zentravir",
                    ),
                    (
                        "Placebo",
                        "PLACEBO_COMPARATOR",
                        "Matching placebo tablets orally once daily",
                        "Placebo",
                    ),
                ]
            ),
            "outcomesModule": {
                "primaryOutcomes": [primary],
                "secondaryOutcomes": [
                    {
                        "measure": "Change from baseline in the Farrow Symptom Score",
                        "description": "The score ranges from 0 to 40; higher is worse.",
                        "timeFrame": "Baseline and week 24",
                    }
                ],
            },
            "eligibilityModule": {
                "eligibilityCriteria": ELIGIBILITY_1,
                "healthyVolunteers": False,
                "sex": "ALL",
                "minimumAge": "6 Years",
                "maximumAge": "17 Years",
                "stdAges": ["CHILD"],
            },
        },
        "hasResults": False,
    }


def trial_2() -> dict[str, Any]:
    """NCT99000002: withdrawn before enrolment."""
    return {
        "protocolSection": {
            "identificationModule": {
                "nctId": "NCT99000002",
                "orgStudyIdInfo": {"id": "FRC-ZEN-202"},
                "organization": {"fullName": SPONSOR, "class": "OTHER"},
                "briefTitle": "Extended-Release Zentravir in Adults With Farrow Syndrome",
                "officialTitle": (
                    "An Open-Label Phase 2 Study of Extended-Release Zentravir Tablets in Adults "
                    "With Farrow Syndrome"
                ),
            },
            "statusModule": status_module(
                "WITHDRAWN",
                "2024-11-20",
                first_posted="2024-05-02",
                why_stopped="Sponsor decision before enrolment; no participants were enrolled.",
                start="2024-09",
                completion=("2024-11", "ACTUAL"),
            ),
            "sponsorCollaboratorsModule": {
                "responsibleParty": {"type": "SPONSOR"},
                "leadSponsor": {"name": SPONSOR, "class": "OTHER"},
            },
            "descriptionModule": {
                "briefSummary": (
                    "This open-label study was planned to describe the safety of an "
                    "extended-release zentravir tablet in adults with Farrow syndrome. "
                    "It was withdrawn before any participant was enrolled."
                )
            },
            "conditionsModule": {"conditions": ["Farrow Syndrome"]},
            "designModule": {
                "studyType": "INTERVENTIONAL",
                "phases": ["PHASE2"],
                "enrollmentInfo": {"count": 0, "type": "ACTUAL"},
            },
            "armsInterventionsModule": _arms(
                [
                    (
                        "Zentravir XR",
                        "EXPERIMENTAL",
                        "Zentravir extended-release 300 mg orally once daily",
                        "Zentravir XR",
                    )
                ]
            ),
            "outcomesModule": {
                "primaryOutcomes": [
                    {
                        "measure": "Number of participants with treatment-emergent adverse events",
                        "timeFrame": "12 weeks",
                    }
                ]
            },
            "eligibilityModule": {
                "eligibilityCriteria": (
                    "Inclusion Criteria:\n\n* Adults aged 18 years or older with Farrow "
                    "syndrome\n\nExclusion Criteria:\n\n* Pregnancy or breastfeeding"
                ),
                "healthyVolunteers": False,
                "sex": "ALL",
                "minimumAge": "18 Years",
                "stdAges": ["ADULT", "OLDER_ADULT"],
            },
        },
        "hasResults": False,
    }


def _groups() -> list[dict[str, str]]:
    return [
        {"id": "OG000", "title": "Zentravir", "description": "Zentravir 5 mg/kg once daily"},
        {"id": "OG001", "title": "Placebo", "description": "Matching placebo once daily"},
    ]


def _denoms(a: str, b: str) -> list[dict[str, Any]]:
    return [
        {
            "units": "Participants",
            "counts": [{"groupId": "OG000", "value": a}, {"groupId": "OG001", "value": b}],
        }
    ]


def trial_3() -> dict[str, Any]:
    """NCT99000003: completed, with posted results."""
    return {
        "protocolSection": {
            "identificationModule": {
                "nctId": "NCT99000003",
                "orgStudyIdInfo": {"id": "FRC-ZEN-201"},
                "organization": {"fullName": SPONSOR, "class": "OTHER"},
                "briefTitle": "Zentravir in Adolescents With Farrow Syndrome (ZEN-TEEN)",
                "officialTitle": (
                    "A Randomized, Placebo-Controlled Phase 2 Study of the Efficacy and Safety "
                    "of Zentravir in Adolescents With Farrow Syndrome"
                ),
                "acronym": "ZEN-TEEN",
            },
            "statusModule": status_module(
                "COMPLETED",
                "2024-09-10",
                first_posted="2022-01-12",
                results_posted="2024-09-10",
                start="2022-03-01",
                completion=("2023-11-30", "ACTUAL"),
            ),
            "sponsorCollaboratorsModule": {
                "responsibleParty": {"type": "SPONSOR"},
                "leadSponsor": {"name": SPONSOR, "class": "OTHER"},
            },
            "descriptionModule": {
                "briefSummary": (
                    "This study compared zentravir with placebo for 12 weeks in adolescents "
                    "with Farrow syndrome, measuring symptom scores and adverse events."
                )
            },
            "conditionsModule": {"conditions": ["Farrow Syndrome"]},
            "designModule": {
                "studyType": "INTERVENTIONAL",
                "phases": ["PHASE2"],
                "enrollmentInfo": {"count": 120, "type": "ACTUAL"},
            },
            "armsInterventionsModule": _arms(
                [
                    ("Zentravir", "EXPERIMENTAL", "Zentravir 5 mg/kg once daily", "Zentravir"),
                    ("Placebo", "PLACEBO_COMPARATOR", "Matching placebo once daily", "Placebo"),
                ]
            ),
            "outcomesModule": {
                "primaryOutcomes": [
                    {
                        "measure": "Change from baseline in the Farrow Symptom Score at week 12",
                        "description": "The score ranges from 0 to 40; higher is worse.",
                        "timeFrame": "Baseline and week 12",
                    }
                ],
                "secondaryOutcomes": [
                    {
                        "measure": "Number of participants with a serious adverse event",
                        "timeFrame": "12 weeks",
                    }
                ],
            },
            "eligibilityModule": {
                "eligibilityCriteria": (
                    "Inclusion Criteria:\n\n1. Age 12 to 17 years\n2. Farrow syndrome "
                    "diagnosed at least 6 months before screening\n\nExclusion Criteria:\n\n"
                    "1. Use of systemic corticosteroids within 30 days"
                ),
                "healthyVolunteers": False,
                "sex": "ALL",
                "minimumAge": "12 Years",
                "maximumAge": "17 Years",
                "stdAges": ["CHILD"],
            },
        },
        "resultsSection": {
            "outcomeMeasuresModule": {
                "outcomeMeasures": [
                    {
                        "type": "PRIMARY",
                        "title": "Change from baseline in the Farrow Symptom Score at week 12",
                        "description": "The score ranges from 0 to 40; higher is worse.",
                        "populationDescription": "All randomized participants.",
                        "reportingStatus": "POSTED",
                        "paramType": "MEAN",
                        "dispersionType": "STANDARD_DEVIATION",
                        "unitOfMeasure": "score on a scale",
                        "timeFrame": "Baseline and week 12",
                        "groups": _groups(),
                        "denoms": _denoms("60", "60"),
                        "classes": [
                            {
                                "categories": [
                                    {
                                        "measurements": [
                                            {"groupId": "OG000", "value": "-6.2", "spread": "3.1"},
                                            {"groupId": "OG001", "value": "-2.4", "spread": "3.4"},
                                        ]
                                    }
                                ]
                            }
                        ],
                        "analyses": [
                            {
                                "groupIds": ["OG000", "OG001"],
                                "nonInferiorityType": "SUPERIORITY",
                                "pValue": "<0.001",
                                "statisticalMethod": "ANCOVA",
                                "paramType": "Mean Difference (Final Values)",
                                "paramValue": "-3.8",
                                "ciPctValue": "95",
                                "ciNumSides": "TWO_SIDED",
                                "ciLowerLimit": "-5.0",
                                "ciUpperLimit": "-2.6",
                            }
                        ],
                    },
                    {
                        "type": "SECONDARY",
                        "title": "Number of participants with a serious adverse event",
                        "reportingStatus": "POSTED",
                        "paramType": "COUNT_OF_PARTICIPANTS",
                        "unitOfMeasure": "Participants",
                        "timeFrame": "12 weeks",
                        "groups": _groups(),
                        "denoms": _denoms("60", "60"),
                        "classes": [
                            {
                                "categories": [
                                    {
                                        "measurements": [
                                            {"groupId": "OG000", "value": "2"},
                                            {"groupId": "OG001", "value": "3"},
                                        ]
                                    }
                                ]
                            }
                        ],
                    },
                ]
            }
        },
        "hasResults": True,
    }


def studies(update: bool) -> dict[str, dict[str, Any]]:
    return {
        "NCT99000001": trial_1(update),
        "NCT99000002": trial_2(),
        "NCT99000003": trial_3(),
    }


# -- openFDA label ---------------------------------------------------------------------------

BOXED_V3 = (
    "WARNING: HEPATOTOXICITY • Zentravir can cause serious liver injury [see Warnings and "
    "Precautions (5.1)]. • Measure liver enzymes before starting zentravir and every 4 weeks "
    "during treatment. • Stop zentravir if ALT rises above 5 times the upper limit of normal."
)
BOXED_V4 = (
    "WARNING: HEPATOTOXICITY • Zentravir can cause serious and sometimes fatal liver injury "
    "[see Warnings and Precautions (5.1)]. • Measure liver enzymes before starting zentravir "
    "and every 4 weeks during treatment. • Stop zentravir if ALT rises above 3 times the upper "
    "limit of normal."
)


def label(update: bool) -> dict[str, Any]:
    """The zentravir label: version 3, or version 4 (``update``) with a new boxed warning."""
    return {
        "spl_product_data_elements": ["Zentravir Zentravir ZENTRAVIR LACTOSE MAGNESIUM STEARATE"],
        "boxed_warning": [BOXED_V4 if update else BOXED_V3],
        "indications_and_usage": [
            "1 INDICATIONS AND USAGE ZENTRAVIR is an antiviral indicated for the prevention of "
            "flares in patients 6 years and older with Farrow syndrome. Limitations of Use: "
            "Zentravir has not been studied in patients younger than 6 years."
        ],
        "dosage_and_administration": [
            "2 DOSAGE AND ADMINISTRATION 2.1 Recommended Dosage The recommended dosage is "
            "5 mg/kg orally once daily, up to 300 mg per day. Take with or without food. "
            "2.2 Dosage in Renal Impairment Reduce the dose by half when eGFR is 30 to 59 "
            "mL/min/1.73 m2. Do not use when eGFR is below 30 mL/min/1.73 m2."
        ],
        "dosage_and_administration_table": ["<table><tr><td>eGFR</td><td>Dose</td></tr></table>"],
        "dosage_forms_and_strengths": [
            "3 DOSAGE FORMS AND STRENGTHS Tablets: 50 mg and 150 mg, film-coated."
        ],
        "contraindications": [
            "4 CONTRAINDICATIONS Zentravir is contraindicated in patients with decompensated "
            "liver disease (Child-Pugh B or C)."
        ],
        "warnings_and_cautions": [
            "5 WARNINGS AND PRECAUTIONS 5.1 Hepatotoxicity Elevations of ALT above 5 times the "
            "upper limit of normal occurred in 2.1% of zentravir-treated patients and 0.4% of "
            "placebo-treated patients in clinical trials. Monitor liver enzymes as recommended. "
            "5.2 Photosensitivity Advise patients to avoid prolonged exposure to sunlight."
        ],
        "adverse_reactions": [
            "6 ADVERSE REACTIONS The most common adverse reactions (incidence ≥5% and greater "
            "than placebo) were headache (12%), nausea (9%) and photosensitivity rash (6%)."
        ],
        "drug_interactions": [
            "7 DRUG INTERACTIONS Strong CYP3A inhibitors increase zentravir exposure. Avoid "
            "coadministration with ketoconazole or clarithromycin."
        ],
        "use_in_specific_populations": [
            "8 USE IN SPECIFIC POPULATIONS 8.1 Pregnancy There are no adequate data on the use "
            "of zentravir in pregnant women. 8.4 Pediatric Use Safety and effectiveness in "
            "patients younger than 6 years have not been established."
        ],
        "overdosage": [
            "10 OVERDOSAGE There is no specific antidote for zentravir overdose. Provide "
            "supportive care and monitor liver enzymes."
        ],
        "description": [
            "11 DESCRIPTION Zentravir is a synthetic nucleoside analogue invented for the "
            "citeseal demo. Each film-coated tablet contains 50 mg or 150 mg of zentravir."
        ],
        "clinical_pharmacology": [
            "12 CLINICAL PHARMACOLOGY 12.1 Mechanism of Action Zentravir blocks replication of "
            "the (fictional) Farrow virus. 12.3 Pharmacokinetics Peak plasma concentrations "
            "occur 2 to 3 hours after a dose; the half-life is about 14 hours."
        ],
        "mechanism_of_action": [
            "12.1 Mechanism of Action Zentravir blocks replication of the (fictional) Farrow virus."
        ],
        "clinical_studies": [
            "14 CLINICAL STUDIES In a 12-week randomized trial in 120 adolescents with Farrow "
            "syndrome (ZEN-TEEN), the Farrow Symptom Score fell by 6.2 points with zentravir "
            "and by 2.4 points with placebo (difference -3.8; 95% CI -5.0 to -2.6)."
        ],
        "how_supplied": [
            "16 HOW SUPPLIED/STORAGE AND HANDLING Bottles of 30 tablets. Store at 20°C to 25°C."
        ],
        "package_label_principal_display_panel": [
            "PRINCIPAL DISPLAY PANEL NDC 99999-001-30 ZENTRAVIR tablets 150 mg 30 Tablets"
        ],
        "set_id": DEMO_SETID,
        "id": "5eed0001-0000-4000-8000-0000000000a4"
        if update
        else "5eed0001-0000-4000-8000-0000000000a3",
        "effective_time": "20250520" if update else "20241105",
        "version": "4" if update else "3",
        "openfda": {
            "brand_name": ["ZENTRAVIR"],
            "generic_name": ["ZENTRAVIR"],
            "manufacturer_name": ["Farrow Research Consortium (fictional)"],
            "product_type": ["HUMAN PRESCRIPTION DRUG"],
            "route": ["ORAL"],
            "substance_name": ["ZENTRAVIR"],
            "spl_id": [
                "5eed0001-0000-4000-8000-0000000000a4"
                if update
                else "5eed0001-0000-4000-8000-0000000000a3"
            ],
            "spl_set_id": [DEMO_SETID],
        },
    }


def label_meta(total: int, limit: int, last_updated: str) -> dict[str, Any]:
    return {
        "disclaimer": "Synthetic demo data written for citeseal; not from openFDA.",
        "terms": "https://open.fda.gov/terms/",
        "license": "https://open.fda.gov/license/",
        "last_updated": last_updated,
        "results": {"skip": 0, "limit": limit, "total": total},
    }


NO_MATCH = {"error": {"code": "NOT_FOUND", "message": "No matches found!"}}
