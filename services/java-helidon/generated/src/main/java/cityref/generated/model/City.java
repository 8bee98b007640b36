package cityref.generated.model;



/**
 * A city rendered in one language. Keys in this order.
 */
public class City   {

    private String countryIso;
    private Long id;
    private Boolean isFeatured;
    private String name;
    private String regionName;

    /**
     * Default constructor.
     */
    public City() {
    // JSON-B / Jackson
    }

    /**
     * Create City.
     *
     * @param countryIso ISO 3166-1 alpha-2 code of the city&#39;s country.
     * @param id The city id.
     * @param isFeatured Whether the city is featured.
     * @param name The city&#39;s name in the requested language.
     * @param regionName The name of the city&#39;s region in the requested language.
     */
    public City(
        String countryIso, 
        Long id, 
        Boolean isFeatured, 
        String name, 
        String regionName
    ) {
        this.countryIso = countryIso;
        this.id = id;
        this.isFeatured = isFeatured;
        this.name = name;
        this.regionName = regionName;
    }



    /**
     * ISO 3166-1 alpha-2 code of the city's country.
     * @return countryIso
     */
    public String getCountryIso() {
        return countryIso;
    }

    public void setCountryIso(String countryIso) {
        this.countryIso = countryIso;
    }

    /**
     * The city id.
     * minimum: 1
     * maximum: 9223372036854775807
     * @return id
     */
    public Long getId() {
        return id;
    }

    public void setId(Long id) {
        this.id = id;
    }

    /**
     * Whether the city is featured.
     * @return isFeatured
     */
    public Boolean getIsFeatured() {
        return isFeatured;
    }

    public void setIsFeatured(Boolean isFeatured) {
        this.isFeatured = isFeatured;
    }

    /**
     * The city's name in the requested language.
     * @return name
     */
    public String getName() {
        return name;
    }

    public void setName(String name) {
        this.name = name;
    }

    /**
     * The name of the city's region in the requested language.
     * @return regionName
     */
    public String getRegionName() {
        return regionName;
    }

    public void setRegionName(String regionName) {
        this.regionName = regionName;
    }

    /**
      * Create a string representation of this pojo.
    **/
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append("class City {\n");
        
        sb.append("    countryIso: ").append(toIndentedString(countryIso)).append("\n");
        sb.append("    id: ").append(toIndentedString(id)).append("\n");
        sb.append("    isFeatured: ").append(toIndentedString(isFeatured)).append("\n");
        sb.append("    name: ").append(toIndentedString(name)).append("\n");
        sb.append("    regionName: ").append(toIndentedString(regionName)).append("\n");
        sb.append("}");
        return sb.toString();
    }

    /**
     * Convert the given object to string with each line indented by 4 spaces
     * (except the first line).
    */
    private static String toIndentedString(Object o) {
        return o == null ? "null" : o.toString().replace("\n", "\n    ");
    }
}

