package cityref.generated.model;



/**
 * Every non-2xx body.
 */
public class Error   {

    private String message;

    /**
     * Default constructor.
     */
    public Error() {
    // JSON-B / Jackson
    }

    /**
     * Create Error.
     *
     * @param message A fixed text per failure; see the table in the description.
     */
    public Error(
        String message
    ) {
        this.message = message;
    }



    /**
     * A fixed text per failure; see the table in the description.
     * @return message
     */
    public String getMessage() {
        return message;
    }

    public void setMessage(String message) {
        this.message = message;
    }

    /**
      * Create a string representation of this pojo.
    **/
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder();
        sb.append("class Error {\n");
        
        sb.append("    message: ").append(toIndentedString(message)).append("\n");
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

